//! Peers: the same blocks through other Ethereum engines.
//!
//! - [`export`]: a generated chain (`gigagas.chain/1`, complete genesis state) written as an
//!   ethereum/tests `BlockchainTests` JSON file (what `evm blocktest`, `revme blockchaintest`
//!   and `gigagas conformance` read) and as concatenated block RLP with a geth `genesis.json`
//!   (what `geth init` + `geth import` read).
//! - [`tools`]: where the peer binaries live (the gigagas tool cache) and their versions.
//! - [`run`]: runs one peer on an export as a child process, timed wall-clock from spawn to
//!   exit, and checks that it accepted every block (a peer that fails or disagrees is an
//!   error, never a time).
//! - [`report`]: the `gigagas.peers/1` result `gigagas peers` writes (rows, ratios, what
//!   each time includes).
//!
//! Architecture invariant: a peer time is recorded only for a run that accepted the same
//! blocks and reached the same head; exports are written only when the chain re-encodes to
//! the hashes it was loaded with.

pub mod export;
pub mod report;
pub mod run;
pub mod tools;

pub use export::{export_chain, ChainExport, ExportError, Format};
pub use report::{PeerRow, PeersReport, PEERS_SCHEMA};
pub use run::{PeerError, PeerKind, PeerRun};
