//! The engine: the one home of the verified-block pipeline.
//!
//! A block goes through named stages, as in any client: **recover** senders, **execute**
//! (sequential, building the BAL, or parallel from the BAL), **verify** (header values,
//! per-transaction equality with the baseline, the BAL), **write** (apply the block's changes
//! to the state) and **root** (the state root of the result, serial or parallel). [`block`]
//! prepares a block and runs it once, verified; [`pipeline`] runs a chain of prepared blocks
//! through the stages, back to back or overlapped across blocks, and times every stage.
//!
//! Architecture invariant: a time is recorded only for a run that verified; an error stops
//! the pipeline at the failing block, and nothing after it is accepted.

pub mod block;
pub mod checks;
pub mod disk;
pub mod mega;
pub mod open;
pub mod os;
pub mod pipeline;
pub mod recovery;
pub mod root;
pub mod spec;
mod sync;
pub mod variant;

pub use block::{
    check_parent, execute_both, execute_from_bal, plan_from, prepare, prepare_chain, prepare_with,
    run_block, run_block_with, verify_run, BaselineRoot, BlockCase, BlockRun, BothPaths, Mode,
    ModeRun, Recovery,
};
pub use checks::{Checks, RootCheck};
pub use disk::{DiskRoot, SyncPolicy, DEFAULT_TRIE_BUFFER, MAX_WRITE_GROUP, MIN_TRIE_BUFFER};
pub use mega::{mega_plan, mega_pre_state, run_mega, MegaUnit};
pub use open::{resume_store, Resume};
pub use pipeline::{
    run_pipeline, run_pipeline_on, run_pipeline_with, BlockTimeline, PipelineOptions, PipelineRun,
    StageSpan, PREFETCH_THREADS, STAGES, VERIFY_QUEUE,
};
pub use recovery::{HostWork, Recoverer, RecoveryBackend};
pub use root::{
    change_set, change_set_of_execution, full_root, incremental_state, post_state_root,
    touched_post_state, BlockWrite, DiskSnapshot, Flush, IncrementalState, MemoryRoot, PendingRoot,
    RootMode,
};
pub use spec::{
    check_incremental_data, Execution, RunSpec, SpecError, StateKind, StateSpec, ValidRun,
    ValidState, MAX_MEGA, MAX_STAGE_THREADS, MAX_THREADS,
};
pub use variant::{writes_only, BalVariant, FullValues};
