//! One module per subcommand: each declares its flags (`…Args`, with the help text beside
//! every flag) and an `exec` that turns them into the library's options value, calls the
//! library and prints its result.

pub mod bal;
pub mod bench;
pub mod compare;
pub mod completions;
pub mod conformance;
pub mod db;
pub mod differential;
pub mod fetch;
pub mod gen;
pub mod gpu;
pub mod inject;
pub mod pack;
pub mod peers;
pub mod report;
pub mod run;
pub mod simulate;
