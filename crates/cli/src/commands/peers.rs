//! `gigagas export` and `gigagas peers`: flags → library calls (`gigagas_peers`,
//! `gigagas_bench`), tables and the `gigagas.peers/1` JSON.

use crate::common::out;
use crate::output::{Input, Output, OutputDir};
use anyhow::{bail, Context, Result};
use clap::Args;
use gigagas_bench::{bench, BenchOptions, Recovery};
use gigagas_exec::Scheduler;
use gigagas_peers::{
    export::{export_chain, Format},
    report::{median, PeerRow, PeersReport, PEERS_SCHEMA, RATIO_DEFINITION},
    run::{binary, run_peer, start_floor, PeerError},
    PeerKind,
};
use std::{path::PathBuf, time::Instant};

/// `gigagas export`.
#[derive(Args)]
pub struct ExportArgs {
    /// A generated chain (`gigagas gen ... --out DIR`; gigagas.chain/1, fork Cancun, Prague,
    /// Osaka or Amsterdam; geth cannot run an Amsterdam chain to its state root, so `peers`
    /// leaves geth out of one, naming `--fork Osaka`).
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// Output directory (new or empty; any directory with --force), filled through a
    /// temporary directory renamed into place.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// What to write, comma-separated: `blocktest` (blocktest.json, an ethereum/tests
    /// blockchain test) and/or `rlp` (chain.rlp + genesis.json for geth init/import).
    #[arg(long, value_delimiter = ',', default_value = "blocktest,rlp")]
    format: Vec<String>,
    /// Replace a non-empty --out directory (only once the new export is complete).
    #[arg(long)]
    force: bool,
}

/// `gigagas peers`.
#[derive(Args)]
pub struct PeersArgs {
    /// A generated chain (as for `export`).
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// Write the result (schema gigagas.peers/1) to FILE (`-`: stdout, the tables then go
    /// to stderr). Checked before the run; never an input.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Timed repeats per engine (interleaved); the median is reported. 1 to 1000.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Untimed warm-up runs per engine, 0 to 100.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Peers to run, comma-separated: gigagas-process, gigagas-disk (`run` on its MDBX
    /// store, warm: geth import's counterpart), gigagas-disk-cold (the same, page cache
    /// dropped before every block), geth-blocktest, geth-import, revme.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "gigagas-process,gigagas-disk,geth-blocktest,geth-import,revme"
    )]
    peers: Vec<String>,
    /// Fail when a selected peer is not installed (default: shown as "not installed").
    #[arg(long)]
    require_all: bool,
    /// Keep the exported files in DIR (new or empty) instead of a temporary directory.
    #[arg(long, value_name = "DIR")]
    keep_export: Option<PathBuf>,
    /// Seconds one peer process may run before it is killed and the peer reported failed
    /// (with the end of its stderr), 1 to 86400.
    #[arg(long, value_name = "SECONDS", default_value_t = gigagas_peers::run::PEER_TIMEOUT.as_secs())]
    timeout: u64,
    /// Where gigagas's in-process sender recovery row recovers: cpu (libsecp256k1, all
    /// cores; the default), gpu (refused, naming what is missing, where no GPU answers) or
    /// auto (the GPU when one answers; the row says which).
    #[arg(long, value_name = "BACKEND", default_value = "cpu")]
    recovery: gigagas_engine::RecoveryBackend,
}

fn parse_formats(names: &[String]) -> Result<Vec<Format>> {
    let mut formats = Vec::new();
    for name in names {
        let f = Format::parse(name)
            .with_context(|| format!("--format {name:?}: unknown (blocktest, rlp)"))?;
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    if formats.is_empty() {
        bail!("--format: nothing to write");
    }
    Ok(formats)
}

fn parse_peer(name: &str) -> Result<PeerKind> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "gigagas-process" | "gigagas" => PeerKind::GigagasProcess,
        "gigagas-disk" => PeerKind::GigagasDisk,
        "gigagas-disk-cold" => PeerKind::GigagasDiskCold,
        "geth-blocktest" | "evm" | "geth-evm" => PeerKind::GethBlocktest,
        "geth-import" | "geth" => PeerKind::GethImport,
        "revme" => PeerKind::Revme,
        other => bail!(
            "--peers {other:?}: unknown peer (gigagas-process, gigagas-disk, gigagas-disk-cold, geth-blocktest, geth-import, revme)"
        ),
    })
}

/// `gigagas export --data DIR --out DIR [--format blocktest,rlp] [--force]`.
pub fn exec_export(args: ExportArgs) -> Result<()> {
    let formats = parse_formats(&args.format)?;
    let inputs = Input::all("--data", [&args.data]);
    let out = OutputDir::new("--out", &args.out, args.force, &inputs)?;
    let bar = crate::common::spinner("checking the chain (senders, hashes, head state)");
    let export = export_chain(&args.data);
    bar.finish_and_clear();
    let export = export?;
    if let Some(why) = export.geth_disagrees() {
        crate::common::note!("note: {why}");
    }
    let mut names = Vec::new();
    out.write_with(|dir| {
        for path in export.write(dir, &formats)? {
            names.push(
                path.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        Ok(())
    })?;
    out!(
        "{}: {} blocks, {} txs, {:.1} Mgas, network {}, head {} (state root {}) → {} ({})",
        export.name,
        export.blocks.len(),
        export.txs(),
        export.gas_used() as f64 / 1e6,
        export.network,
        export.head_hash(),
        export.head_state_root(),
        args.out.display(),
        names.join(", ")
    );
    Ok(())
}

fn mgas(gas: u64, ns: u64) -> Option<f64> {
    (ns > 0).then(|| gas as f64 / 1e6 / (ns as f64 / 1e9))
}

fn in_process_row(engine: &str, includes: &str, excludes: &str, samples: Vec<u64>) -> PeerRow {
    PeerRow {
        engine: engine.to_owned(),
        version: format!("gigagas {}", env!("CARGO_PKG_VERSION")),
        status: "ok".into(),
        error: None,
        process: false,
        includes: includes.to_owned(),
        excludes: excludes.to_owned(),
        median_ns: median(&samples),
        repeat_ns: samples,
        start_floor_ns: None,
        mgas_per_s: None,
        mgas_per_s_net_of_start: None,
        own_mgas_per_s: None,
        compared_with: None,
        ratio: None,
        net_ratio: None,
        net_compared_with: None,
    }
}

const SEQ: &str = "gigagas sequential (in-process)";
const SEQ_FULL: &str = "gigagas sequential + recovery + root (in-process)";
const PROCESS: &str = "gigagas conformance (process)";

/// `gigagas peers --data DIR [--json F] [--repeats R]`.
pub fn exec(args: PeersArgs) -> Result<()> {
    crate::limits::check_range("--repeats", args.repeats, 1, 1000)?;
    crate::limits::check_range("--warmup", args.warmup, 0, 100)?;
    let timeout = usize::try_from(args.timeout).unwrap_or(usize::MAX);
    crate::limits::check_range("--timeout", timeout, 1, 86_400)?;
    // The recovery backend is opened before anything is exported or run.
    let recoverer = gigagas_engine::Recoverer::open(args.recovery)
        .map_err(anyhow::Error::msg)
        .context("--recovery")?;
    let mut kinds = Vec::new();
    for name in &args.peers {
        let k = parse_peer(name)?;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let inputs = Input::all("--data", [&args.data]);
    let json = args
        .json
        .as_deref()
        .map(|p| Output::new("--json", p, &inputs))
        .transpose()?;
    let keep = args
        .keep_export
        .as_deref()
        .map(|p| OutputDir::new_without_force("--keep-export", p, &inputs))
        .transpose()?;
    let console = crate::common::Console::for_output(json.as_ref());

    // The export the process peers read: only the formats the selected peers read (a
    // 10M-slot blocktest.json, pre- and post-state, is gigabytes no rlp peer needs).
    let export = export_chain(&args.data)?;
    let tmp = gigagas_guard::interrupt::TempDir::new("gigagas-peers-")
        .context("temporary export directory")?;
    let mut formats: Vec<Format> = kinds.iter().filter_map(|k| k.reads()).collect();
    formats.sort();
    formats.dedup();
    export.write(tmp.path(), &formats)?;
    let gas = export.gas_used();

    // gigagas in-process: sequential and parallel at 1 and 2 threads (the bench library),
    // then sender recovery and the full state root per block, each timed on its own.
    let dataset = gigagas_data::load(&gigagas_data::DataSource::open(&args.data)?)
        .context("loading the data set")?;
    let cases = crate::common::prepare_all(&dataset, 0, gigagas_engine::BaselineRoot::FromScratch)?;
    let options = BenchOptions {
        threads: vec![1, 2],
        schedulers: vec![Scheduler::GasUsed],
        warmup: args.warmup,
        repeats: args.repeats,
        recovery: vec![Recovery::Pre],
        warm_spin: gigagas_exec::WARM_SPIN,
        ..BenchOptions::default()
    };
    let numbers: Vec<u64> = cases.iter().map(|c| c.number()).collect();
    let bar = crate::common::progress(options.steps(&numbers), "gigagas");
    let bench_report = bench(&dataset, &cases, &options, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let recover_samples = time_repeats(args.warmup, args.repeats, || {
        for block in &dataset.blocks {
            recoverer.recover(block).context("sender recovery")?;
        }
        Ok(())
    })?;
    let post_states = post_states(&dataset);
    let root_samples = time_repeats(args.warmup, args.repeats, || {
        for (state, block) in post_states.iter().zip(&dataset.blocks) {
            let root = gigagas_state::state_root(state);
            if root != block.header.state_root {
                bail!(
                    "block {}: state root {root}, header says {}",
                    block.header.number,
                    block.header.state_root
                );
            }
        }
        Ok(())
    })?;

    let mut rows = Vec::new();
    for run in &bench_report.runs {
        let name = match run.mode.as_str() {
            "sequential" => SEQ.to_owned(),
            _ => format!("gigagas parallel {}t (in-process)", run.threads),
        };
        let includes = if run.mode == "sequential" {
            "pre-execution system calls, all transactions, post-execution, BAL build"
        } else {
            "all transactions on the worker pool from the BAL, each checked against it, \
             receipts merged in order (gas-used scheduler)"
        };
        rows.push(in_process_row(
            &name,
            includes,
            "process start, parsing, sender recovery (done before), state root, disk",
            run.repeat_ns.clone(),
        ));
    }
    let seq_samples = rows
        .iter()
        .find(|r| r.engine == SEQ)
        .map(|r| r.repeat_ns.clone())
        .unwrap_or_default();
    let full: Vec<u64> = (0..args.repeats)
        .map(|r| seq_samples.get(r).copied().unwrap_or(0) + recover_samples[r] + root_samples[r])
        .collect();
    let recovered_on = format!(
        "recovering every sender from its signature ({})",
        match recoverer.name() {
            "gpu" => recoverer.describe(),
            _ => "rayon, all cores".to_owned(),
        }
    );
    rows.push(in_process_row(
        "gigagas sender recovery (in-process)",
        &recovered_on,
        "execution, state root, process start, parsing",
        recover_samples.clone(),
    ));
    rows.push(in_process_row(
        "gigagas state root (in-process)",
        "the full state root of every block's post-state, rebuilt from scratch (storage tries \
         in parallel, all cores)",
        "execution, sender recovery, process start, parsing",
        root_samples.clone(),
    ));
    rows.push(in_process_row(
        SEQ_FULL,
        "sender recovery (all cores) + sequential execution + full state root per block \
         (rebuilt from the post-state, all cores); the sum of the three repeat by repeat",
        "process start, JSON/RLP parsing, header rules, disk",
        full,
    ));

    // Process peers, interleaved repeat by repeat.
    let gigagas_exe = std::env::current_exe().context("locating this gigagas binary")?;
    let mut process_rows: Vec<(PeerKind, PeerRow, Vec<f64>)> = Vec::new();
    for &kind in &kinds {
        let bin = binary(kind, &gigagas_exe);
        let version = if matches!(
            kind,
            PeerKind::GigagasProcess | PeerKind::GigagasDisk | PeerKind::GigagasDiskCold
        ) {
            Some(format!("gigagas {}", env!("CARGO_PKG_VERSION")))
        } else {
            gigagas_peers::tools::version(&bin)
        };
        let mut row = PeerRow {
            engine: kind.name().to_owned(),
            version: version.clone().unwrap_or_else(|| "-".into()),
            status: "ok".into(),
            error: None,
            process: true,
            includes: kind.includes().to_owned(),
            excludes: kind.excludes().to_owned(),
            repeat_ns: Vec::new(),
            median_ns: None,
            start_floor_ns: None,
            mgas_per_s: None,
            mgas_per_s_net_of_start: None,
            own_mgas_per_s: None,
            compared_with: None,
            ratio: None,
            net_ratio: None,
            net_compared_with: None,
        };
        let geth = matches!(kind, PeerKind::GethBlocktest | PeerKind::GethImport);
        let on_store = matches!(kind, PeerKind::GigagasDisk | PeerKind::GigagasDiskCold);
        let store_refuses = on_store
            .then(|| gigagas_engine::check_incremental_data(&dataset.blocks).err())
            .flatten();
        if let Some(why) = store_refuses {
            // A chain the store's incremental root cannot run (no BALs: a fetched one).
            if args.require_all {
                bail!("--peers {}: {why} (--require-all)", kind.name());
            }
            row.status = "not comparable".into();
            row.error = Some(why.render(|f| format!("`{f}`")));
        } else if let Some(why) = export.geth_disagrees().filter(|_| geth) {
            // An Amsterdam chain (gen's default): geth is not run, and says why.
            if args.require_all {
                bail!("--peers {}: {why} (--require-all)", kind.name());
            }
            row.status = "not comparable".into();
            row.error = Some(why.to_owned());
        } else if version.is_none() {
            let e = PeerError::NotInstalled {
                engine: kind.name(),
                path: bin.clone(),
                hint: match kind {
                    PeerKind::GethBlocktest => "scripts/install-geth-evm.sh",
                    PeerKind::GethImport => "scripts/install-geth.sh",
                    _ => "scripts/install-revme.sh",
                },
            };
            if args.require_all {
                bail!("{e} (--require-all)");
            }
            row.status = "not installed".into();
            row.error = Some(e.to_string());
        } else {
            row.start_floor_ns = start_floor(&bin, args.repeats.max(5));
        }
        process_rows.push((kind, row, Vec::new()));
    }
    let runnable = |row: &PeerRow| row.status == "ok";
    let total =
        (args.warmup + args.repeats) * process_rows.iter().filter(|r| runnable(&r.1)).count();
    let bar = crate::common::progress(total as u64, "peers");
    for round in 0..args.warmup + args.repeats {
        for (kind, row, own) in process_rows.iter_mut() {
            if !runnable(row) {
                continue;
            }
            match run_peer(
                *kind,
                &gigagas_exe,
                &args.data,
                tmp.path(),
                &export,
                std::time::Duration::from_secs(args.timeout),
            ) {
                Ok(run) => {
                    if round >= args.warmup {
                        row.repeat_ns.push(run.wall_ns);
                        own.extend(run.own_mgas_per_s);
                    }
                }
                Err(e) => {
                    row.status = "failed".into();
                    row.error = Some(e.to_string());
                    row.repeat_ns.clear();
                }
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    for (_, mut row, own) in process_rows {
        row.median_ns = median(&row.repeat_ns);
        row.own_mgas_per_s = (!own.is_empty()).then(|| {
            let mut own = own;
            own.sort_by(f64::total_cmp);
            own[(own.len() - 1) / 2]
        });
        rows.push(row);
    }

    // Throughput and ratios.
    let median_of = |rows: &[PeerRow], name: &str| -> Option<u64> {
        rows.iter()
            .find(|r| r.engine == name)
            .and_then(|r| r.median_ns)
    };
    let seq = median_of(&rows, SEQ);
    let seq_full = median_of(&rows, SEQ_FULL);
    let process = median_of(&rows, PROCESS);
    // geth import's like-for-like row where it ran: gigagas on its MDBX store, warm (both
    // read the chain, recover, execute, root every block and write their store), net of its
    // start floor as geth's is.
    let disk_net = rows
        .iter()
        .find(|r| r.engine == PeerKind::GigagasDisk.name())
        .and_then(|r| Some(r.median_ns?.saturating_sub(r.start_floor_ns?)));
    for row in &mut rows {
        let Some(t) = row.median_ns else { continue };
        row.mgas_per_s = mgas(gas, t);
        let net = row.start_floor_ns.map(|f| t.saturating_sub(f));
        row.mgas_per_s_net_of_start = net.and_then(|n| mgas(gas, n));
        let (base_name, base) = if row.process {
            (PROCESS, process)
        } else {
            (SEQ, seq)
        };
        if let Some(b) = base.filter(|&b| b > 0) {
            row.compared_with = Some(base_name.to_owned());
            row.ratio = Some(t as f64 / b as f64);
        }
        // Like phases: geth import vs gigagas on MDBX where that ran; else in-process, geth
        // (recovery + root) vs seq+recovery+root; revme (neither) vs sequential execution.
        let net_base = match row.engine.as_str() {
            e if e == PeerKind::Revme.name() => Some((SEQ, seq)),
            e if e == PeerKind::GethImport.name() && disk_net.is_some() => {
                Some((PeerKind::GigagasDisk.name(), disk_net))
            }
            e if e == PeerKind::GethBlocktest.name()
                || e == PeerKind::GethImport.name()
                || e == PROCESS =>
            {
                Some((SEQ_FULL, seq_full))
            }
            _ => None,
        };
        if let (Some(n), Some((name, Some(b)))) = (net, net_base) {
            if b > 0 {
                row.net_ratio = Some(n as f64 / b as f64);
                row.net_compared_with = Some(name.to_owned());
            }
        }
    }

    let report = PeersReport {
        schema: PEERS_SCHEMA.to_owned(),
        gigagas_version: env!("CARGO_PKG_VERSION").to_owned(),
        data: args.data.display().to_string(),
        test: export.name.clone(),
        network: export.network.to_owned(),
        blocks: export.blocks.len(),
        txs: export.txs(),
        gas,
        head_hash: export.head_hash().to_string(),
        head_state_root: export.head_state_root().to_string(),
        cores: crate::common::available_cores(),
        repeats: args.repeats,
        warmup: args.warmup,
        ratio_definition: RATIO_DEFINITION.to_owned(),
        rows,
        provenance: serde_json::to_value(gigagas_lab::Provenance::capture()).ok(),
    };
    say_report(console, &report);
    if let Some(out) = &json {
        out.write(&serde_json::to_vec_pretty(&report)?)?;
    }
    if let Some(keep) = &keep {
        keep.write_with(|dir| {
            export.write(dir, &[Format::BlockTest, Format::Rlp])?;
            Ok(())
        })?;
    }
    if !report.all_ok() {
        let failed: Vec<String> = report
            .rows
            .iter()
            .filter(|r| r.status == "failed")
            .map(|r| r.error.clone().unwrap_or_default())
            .collect();
        bail!("{} peer(s) failed: {}", failed.len(), failed.join("; "));
    }
    Ok(())
}

/// Times `f` `repeats` times after `warmup` untimed calls; ns per call.
fn time_repeats(
    warmup: usize,
    repeats: usize,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Vec<u64>> {
    for _ in 0..warmup {
        f()?;
    }
    (0..repeats)
        .map(|_| {
            let t = Instant::now();
            f()?;
            Ok(t.elapsed().as_nanos() as u64)
        })
        .collect()
}

/// The state after each block of a generated chain: the next block's pre-state, and for the
/// last block its pre-state with its BAL applied. Built outside every timing.
fn post_states(dataset: &gigagas_data::Dataset) -> Vec<gigagas_data::PreState> {
    let n = dataset.blocks.len();
    (0..n)
        .map(|k| {
            if k + 1 < n {
                (*dataset.blocks[k + 1].pre_state).clone()
            } else {
                let block = &dataset.blocks[k];
                let mut state: alloy_primitives::map::HashMap<_, _> = block
                    .pre_state
                    .accounts()
                    .map(|(a, acc)| (*a, acc.clone()))
                    .collect();
                if let Some(bal) = &block.access_list {
                    gigagas_data::chain::apply_bal(&mut state, bal);
                }
                gigagas_data::PreState::new(state, std::sync::Arc::default())
            }
        })
        .collect()
}

fn ms(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |n| format!("{:.1}", n as f64 / 1e6))
}

fn say_report(console: crate::common::Console, report: &PeersReport) {
    console.line(format_args!(
        "{}: {} blocks, {} txs, {:.1} Mgas, network {}, head {} — median of {} repeats after {} warm-up, {} cores",
        report.test,
        report.blocks,
        report.txs,
        report.gas as f64 / 1e6,
        report.network,
        report.head_hash,
        report.repeats,
        report.warmup,
        report.cores
    ));
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header([
        "engine",
        "version",
        "status",
        "time ms (median)",
        "start floor ms",
        "Mgas/s",
        "Mgas/s net of start",
        "own Mgas/s",
        "ratio",
        "net ratio",
    ]);
    let x = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}x"));
    let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    for r in &report.rows {
        table.add_row([
            r.engine.clone(),
            gigagas_guard::text::printable(&r.version).into_owned(),
            r.status.clone(),
            ms(r.median_ns),
            ms(r.start_floor_ns),
            f(r.mgas_per_s),
            f(r.mgas_per_s_net_of_start),
            f(r.own_mgas_per_s),
            x(r.ratio),
            x(r.net_ratio),
        ]);
    }
    console.line(&table);
    let mut legend = comfy_table::Table::new();
    legend.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    legend.set_header([
        "engine",
        "time includes",
        "excludes",
        "ratio vs",
        "net ratio vs",
    ]);
    legend
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(160);
    for r in &report.rows {
        legend.add_row([
            r.engine.clone(),
            r.includes.clone(),
            r.excludes.clone(),
            r.compared_with.clone().unwrap_or_else(|| "-".into()),
            r.net_compared_with.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    console.line(&legend);
    console.line(format_args!("ratio: {}", report.ratio_definition));
    for r in &report.rows {
        if let Some(e) = &r.error {
            console.line(format_args!(
                "{} {}: {}",
                r.engine,
                r.status,
                gigagas_guard::text::printable(e)
            ));
        }
    }
}
