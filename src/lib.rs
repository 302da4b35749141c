//! The `depot` umbrella binary's library part: the demo.

pub mod demo;
