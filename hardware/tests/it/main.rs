//! The integration tests of `depot-hardware`, linked as one binary (one link
//! of the tree instead of one per file). Each module is one area; the
//! helpers every area shares come first.

mod common;

mod printer;
mod printer_driver;
mod printer_serial;
mod printer_sim;
mod printer_zpl;
mod scale_cas;
mod scale_modbus;
mod scale_modbus_rtu;
mod scale_props;
mod scale_pymodbus;
mod scale_sics;
mod scale_toledo;
mod scanner;
