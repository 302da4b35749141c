//! The integration tests of `depot`, linked as one binary (one link
//! of the tree instead of one per file). Each module is one area; the
//! helpers every area shares come first.

mod demo;
mod demo_station;
mod package;
mod readme;
mod sync;
