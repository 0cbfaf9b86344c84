//! The HTML pages of the result kinds other than bench's (`gigagas report FILE` picks the
//! page by the file's schema): `bal stats` and `peers` results.

use anyhow::Result;

/// The page of a `gigagas bal stats --json` result (`gigagas report FILE`): `None` when
/// `bytes` is not one (another schema), an error when it claims to be one and is not.
pub(crate) fn bal_stats_page(bytes: &[u8]) -> Option<Result<String>> {
    #[derive(serde::Deserialize)]
    struct File {
        gigagas_version: String,
        datasets: Vec<Set>,
    }
    #[derive(serde::Deserialize)]
    struct Set {
        name: String,
        blocks: Vec<Block>,
    }
    #[derive(serde::Deserialize)]
    struct Block {
        gas_used: u64,
        keys: Size,
        writes: Size,
        full: Size,
    }
    #[derive(serde::Deserialize, Default, Clone, Copy)]
    struct Size {
        rlp_bytes: u64,
        snappy_bytes: u64,
        zstd_bytes: u64,
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if value.get("schema").and_then(|s| s.as_str()) != Some(gigagas_balstats::SCHEMA) {
        return None;
    }
    let file: File = match serde_json::from_value(value.clone()) {
        Ok(f) => f,
        Err(e) => return Some(Err(e.into())),
    };
    let kb = |b: u64| b as f64 / 1e3;
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for set in &file.datasets {
        type Pick = fn(&Block) -> Size;
        let variants: [(&str, Pick); 3] = [
            ("keys", |b| b.keys),
            ("writes", |b| b.writes),
            ("full", |b| b.full),
        ];
        let gas: u64 = set.blocks.iter().map(|b| b.gas_used).sum();
        let mut row = vec![
            set.name.clone(),
            set.blocks.len().to_string(),
            format!("{:.1}", gas as f64 / 1e6),
        ];
        let mut totals = Vec::new();
        for (variant, pick) in variants {
            series.push(gigagas_lab::html::SizeSeries {
                name: format!("{} {variant}", set.name),
                points: set
                    .blocks
                    .iter()
                    .map(|b| (b.gas_used as f64 / 1e6, kb(pick(b).rlp_bytes)))
                    .collect(),
            });
            let n = set.blocks.len().max(1) as f64;
            let sum = |f: fn(&Size) -> u64| set.blocks.iter().map(|b| f(&pick(b))).sum::<u64>();
            let (rlp, snappy, zstd) = (
                sum(|s| s.rlp_bytes),
                sum(|s| s.snappy_bytes),
                sum(|s| s.zstd_bytes),
            );
            totals.push(rlp);
            row.push(format!(
                "{:.1} / {:.1} / {:.1}",
                kb(rlp) / n,
                kb(snappy) / n,
                kb(zstd) / n
            ));
        }
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                "-".to_owned()
            } else {
                format!("{:.2}x", a as f64 / b as f64)
            }
        };
        row.push(ratio(totals[2], totals[0]));
        row.push(ratio(totals[0], totals[1]));
        row.push(if gas == 0 {
            "-".into()
        } else {
            format!("{:.0}", totals[0] as f64 / (gas as f64 / 1e6))
        });
        rows.push(row);
    }
    let header = [
        "data set",
        "blocks",
        "Mgas",
        "keys kB/block (RLP / snappy / zstd)",
        "writes kB/block",
        "full kB/block",
        "full ÷ keys",
        "keys ÷ writes",
        "keys bytes/Mgas",
    ];
    let summary = format!(
        "{} data set(s) measured by gigagas {}: every block executed and verified, its BAL \
         (EIP-7928, `keys`) encoded as RLP and compressed; `writes` = post-values without read \
         keys, `full` = keys plus the pre-block value of everything read (docs/balstats-json.md).",
        file.datasets.len(),
        file.gigagas_version
    );
    let summary = with_provenance(summary, value.get("provenance"));
    Some(Ok(gigagas_lab::html::render_bal_sizes(
        &summary, &series, &header, &rows,
    )))
}

/// The HTML page of a `gigagas peers --json` result (`gigagas report FILE`): `None` when
/// `bytes` is not a peers result (then it is read as a bench result), an error when it claims
/// to be one and does not parse.
pub(crate) fn peers_page(bytes: &[u8]) -> Option<Result<String>> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if value.get("schema").and_then(|s| s.as_str()) != Some(gigagas_peers::PEERS_SCHEMA) {
        return None;
    }
    Some(
        serde_json::from_value::<gigagas_peers::PeersReport>(value)
            .map_err(anyhow::Error::from)
            .map(|report| {
                let fmt = |v: Option<f64>, unit: &str| {
                    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}{unit}"))
                };
                let bars: Vec<gigagas_lab::html::PeerBar> = report
                    .rows
                    .iter()
                    .map(|row| gigagas_lab::html::PeerBar {
                        engine: row.engine.clone(),
                        median_ms: row
                            .median_ns
                            .filter(|_| row.status == "ok")
                            .map(|ns| ns as f64 / 1e6),
                        process: row.process,
                        cells: vec![
                            row.version.clone(),
                            match &row.error {
                                Some(e) => format!("{}: {e}", row.status),
                                None => row.status.clone(),
                            },
                            fmt(row.mgas_per_s, ""),
                            fmt(row.ratio, "x"),
                            fmt(row.net_ratio, "x"),
                            row.includes.clone(),
                        ],
                    })
                    .collect();
                let summary = format!(
                    "{}: {} blocks, {} transactions, {:.1} Mgas ({}), head {} state root {}; \
                     median of {} repeats after {} warm-up run(s) on {} cores; gigagas {}.",
                    report.data,
                    report.blocks,
                    report.txs,
                    report.gas as f64 / 1e6,
                    report.network,
                    report.head_hash,
                    report.head_state_root,
                    report.repeats,
                    report.warmup,
                    report.cores,
                    report.gigagas_version,
                );
                let summary = with_provenance(summary, report.provenance.as_ref());
                gigagas_lab::html::render_peers(&summary, &report.ratio_definition, &bars)
            }),
    )
}

/// `summary` followed by the build and host that measured (the result's `provenance`), when
/// the file carries one; the page escapes the text.
fn with_provenance(summary: String, provenance: Option<&serde_json::Value>) -> String {
    match provenance
        .cloned()
        .and_then(|p| serde_json::from_value::<gigagas_lab::Provenance>(p).ok())
    {
        Some(p) => format!("{summary} Measured by {}.", p.summary().replace('\n', "; ")),
        None => summary,
    }
}
