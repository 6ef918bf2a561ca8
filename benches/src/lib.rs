//! mwrouter benchmarks (DESIGN.md "Workspace").
//!
//! Not built yet: the engine benchmarks arrive with the dataplane issue and
//! the end-to-end harness with the generator issue.
