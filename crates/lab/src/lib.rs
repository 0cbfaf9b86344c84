//! The lab: turns measured runs into figures people can use. Statistics over repeats, the
//! critical-path (Amdahl) bound from per-transaction timings, the versioned JSON result schema
//! and the terminal table.
//!
//! Architecture invariant: the lab reads measurements; it never executes a block.

pub mod compare;
pub mod cost_model;
pub mod critical_path;
pub mod html;
pub mod machine_load;
pub mod pipeline_sim;
pub mod provenance;
pub mod report;
pub mod simulate;
pub mod stats;
pub mod table;

pub use critical_path::{critical_path_bound, mega_units, unit_traces, BlockTrace};
pub use provenance::{Build, Host, Provenance};
pub use report::{
    read_reports, read_reports_file, BenchReport, BlockReport, ContentionFloor, FloorSharing,
    PhaseTotals, PipelineBlock, PipelineReport, ReadError, RunReport, SweepReport, TxTrace, SCHEMA,
    SWEEP_SCHEMA,
};
