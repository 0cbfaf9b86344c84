//! The run spec: defaults, and every impossible combination refused by field.

use gigagas_engine::{
    BalVariant, Execution, RootMode, RunSpec, StateKind, StateSpec, SyncPolicy, ValidState,
    MAX_MEGA,
};

fn disk() -> StateSpec {
    StateSpec {
        kind: StateKind::Disk,
        dir: Some("db".into()),
        ..StateSpec::default()
    }
}

#[test]
fn defaults_validate_to_run_s_defaults() {
    let v = RunSpec::default().validate(4).unwrap();
    assert_eq!(v.options.mode.threads(), 4);
    assert_eq!(v.options.root, RootMode::None);
    assert!(v.options.overlap);
    assert_eq!(v.state, ValidState::Memory);
    assert_eq!(v.small_block_gas, gigagas_exec::SMALL_BLOCK_GAS);
    // The stages share the workers' budget unless given a pool of their own.
    assert_eq!(v.options.stage_threads, 0);
    let own = RunSpec {
        stage_threads: Some(3),
        ..RunSpec::default()
    };
    assert_eq!(own.validate(4).unwrap().options.stage_threads, 3);
}

#[test]
fn every_impossible_combination_is_refused_by_field() {
    let cases: Vec<(RunSpec, &str, Option<&str>)> = vec![
        (
            RunSpec {
                pipeline: Some(false),
                stage_threads: Some(2),
                ..RunSpec::default()
            },
            "stage_threads",
            Some("pipeline"),
        ),
        (
            RunSpec {
                stage_threads: Some(gigagas_engine::MAX_STAGE_THREADS + 1),
                ..RunSpec::default()
            },
            "stage_threads",
            None,
        ),
        (
            RunSpec {
                state: StateSpec {
                    kind: StateKind::Disk,
                    ..StateSpec::default()
                },
                ..RunSpec::default()
            },
            "state.dir",
            None,
        ),
        (
            RunSpec {
                state: StateSpec {
                    cold: true,
                    ..StateSpec::default()
                },
                ..RunSpec::default()
            },
            "state.cold",
            Some("state"),
        ),
        (
            RunSpec {
                state: StateSpec {
                    cold: true,
                    ..disk()
                },
                ..RunSpec::default()
            },
            "state.cold",
            Some("pipeline"),
        ),
        (
            RunSpec {
                pipeline: Some(false),
                state: StateSpec {
                    cold: true,
                    sync: Some(SyncPolicy::End),
                    ..disk()
                },
                ..RunSpec::default()
            },
            "state.sync",
            Some("state.cold"),
        ),
        (
            RunSpec {
                pipeline: Some(false),
                state: StateSpec {
                    overlay: Some(true),
                    ..disk()
                },
                ..RunSpec::default()
            },
            "state.overlay",
            Some("pipeline"),
        ),
        (
            RunSpec {
                root: Some(RootMode::Serial),
                state: disk(),
                ..RunSpec::default()
            },
            "root",
            Some("state"),
        ),
        (
            RunSpec {
                execution: Execution::Sequential,
                threads: Some(2),
                ..RunSpec::default()
            },
            "threads",
            Some("execution"),
        ),
        (
            RunSpec {
                bal: BalVariant::None,
                mega: Some(2),
                ..RunSpec::default()
            },
            "mega",
            Some("bal"),
        ),
        (
            RunSpec {
                threads: Some(0),
                ..RunSpec::default()
            },
            "threads",
            None,
        ),
        (
            RunSpec {
                mega: Some(MAX_MEGA + 1),
                ..RunSpec::default()
            },
            "mega",
            None,
        ),
    ];
    for (spec, field, with) in cases {
        let e = spec.validate(2).unwrap_err();
        assert_eq!((e.field, e.with), (field, with), "{spec:?}: {e}");
        assert!(!e.why.contains("--"), "a flag in the engine's words: {e}");
    }
}

#[test]
fn disk_defaults_follow_the_node() {
    let v = RunSpec {
        state: disk(),
        ..RunSpec::default()
    }
    .validate(2)
    .unwrap();
    assert_eq!(v.options.root, RootMode::Incremental);
    assert_eq!(
        v.state,
        ValidState::Disk {
            dir: "db".into(),
            sync: SyncPolicy::NODE,
            overlay: true,
            cold: false,
            cold_index: gigagas_engine::disk::ColdIndex::Dropped,
            trie_buffer: gigagas_engine::DEFAULT_TRIE_BUFFER,
            trie_journal: true,
            write_group: 1,
            wal: true,
        }
    );
    let cold = RunSpec {
        pipeline: Some(false),
        state: StateSpec {
            cold: true,
            ..disk()
        },
        ..RunSpec::default()
    }
    .validate(2)
    .unwrap();
    assert!(matches!(
        cold.state,
        ValidState::Disk {
            sync: SyncPolicy::EveryBlock,
            overlay: false,
            cold_index: gigagas_engine::disk::ColdIndex::Dropped,
            ..
        }
    ));
    // What cold reads keep cached is a setting of cold reads only, refused by name without
    // them, kept with them.
    let index = |cold: bool| {
        RunSpec {
            pipeline: Some(false),
            state: StateSpec {
                cold,
                cold_index: Some(gigagas_engine::disk::ColdIndex::Cached),
                ..disk()
            },
            ..RunSpec::default()
        }
        .validate(2)
    };
    let err = index(false).unwrap_err();
    assert_eq!(
        (err.field, err.with),
        ("state.cold_index", Some("state.cold"))
    );
    assert!(matches!(
        index(true).unwrap().state,
        ValidState::Disk {
            cold_index: gigagas_engine::disk::ColdIndex::Cached,
            ..
        }
    ));
}

#[test]
fn a_write_group_is_bounded_and_needs_the_overlay_and_a_sync_interval_it_divides() {
    let with = |group: usize, sync: Option<SyncPolicy>, overlay: Option<bool>, cold: bool| {
        RunSpec {
            pipeline: cold.then_some(false),
            state: StateSpec {
                write_group: Some(group),
                sync,
                overlay,
                cold,
                ..disk()
            },
            ..RunSpec::default()
        }
        .validate(2)
    };
    let group = |v: gigagas_engine::ValidRun| match v.state {
        ValidState::Disk { write_group, .. } => write_group,
        ValidState::Memory => panic!("on disk"),
    };
    assert_eq!(
        group(with(3, None, None, false).unwrap()),
        3,
        "every-3, the default"
    );
    assert_eq!(
        group(with(2, Some(SyncPolicy::Every(4)), None, false).unwrap()),
        2
    );
    assert_eq!(
        group(with(16, Some(SyncPolicy::End), None, false).unwrap()),
        16
    );
    // One block is every configuration's, cold and every-block included.
    assert_eq!(
        group(with(1, Some(SyncPolicy::EveryBlock), None, true).unwrap()),
        1
    );
    let refused = |group, sync, overlay, cold| {
        let e = with(group, sync, overlay, cold).unwrap_err();
        assert!(!e.why.contains("--"), "a flag in the engine's words: {e}");
        (e.field, e.with)
    };
    let bound = ("state.write_group", None);
    assert_eq!(refused(0, None, None, false), bound);
    assert_eq!(refused(17, Some(SyncPolicy::End), None, false), bound);
    let sync = ("state.write_group", Some("state.sync"));
    assert_eq!(
        refused(2, None, None, false),
        sync,
        "2 does not divide every-3"
    );
    assert_eq!(refused(2, Some(SyncPolicy::EveryBlock), None, false), sync);
    assert_eq!(
        refused(3, None, Some(false), false),
        ("state.write_group", Some("state.overlay"))
    );
    assert_eq!(
        refused(3, Some(SyncPolicy::EveryBlock), None, true),
        ("state.write_group", Some("state.cold"))
    );
    let e = RunSpec {
        state: StateSpec {
            write_group: Some(3),
            ..StateSpec::default()
        },
        ..RunSpec::default()
    }
    .validate(2)
    .unwrap_err();
    assert_eq!(e.field, "state.write_group", "disk only: {e}");
}

#[test]
fn the_trie_journal_needs_a_trie_buffer_on_disk() {
    let with = |journal: Option<bool>, buffer: Option<u64>, cold: bool| {
        RunSpec {
            pipeline: cold.then_some(false),
            state: StateSpec {
                trie_journal: journal,
                trie_buffer: buffer,
                cold,
                ..disk()
            },
            ..RunSpec::default()
        }
        .validate(2)
    };
    let journal = |v: gigagas_engine::ValidRun| match v.state {
        ValidState::Disk { trie_journal, .. } => trie_journal,
        ValidState::Memory => panic!("on disk"),
    };
    assert!(journal(with(None, None, false).unwrap()));
    assert!(!journal(with(Some(false), None, false).unwrap()));
    // No buffer: nothing to journal, and saying either is refused by name.
    assert!(!journal(with(None, Some(0), false).unwrap()));
    assert!(!journal(with(None, None, true).unwrap()));
    // Cold reads with a buffer asked for: journaled at the end like any other.
    let cold = with(None, Some(1 << 20), true).unwrap();
    assert!(matches!(
        cold.state,
        ValidState::Disk {
            cold: true,
            trie_buffer: 1_048_576,
            trie_journal: true,
            ..
        }
    ));
    let e = with(Some(true), Some(0), false).unwrap_err().to_string();
    assert!(
        e.contains("state.trie_journal") && e.contains("state.trie_buffer"),
        "{e}"
    );
    let e = with(Some(false), None, true).unwrap_err().to_string();
    assert!(
        e.contains("state.trie_journal") && e.contains("state.cold"),
        "{e}"
    );
    // Cold with the buffer given as 0: that field is named.
    let e = with(Some(true), Some(0), true).unwrap_err().to_string();
    assert!(
        e.contains("state.trie_journal") && e.contains("state.trie_buffer"),
        "{e}"
    );
    let e = RunSpec {
        state: StateSpec {
            trie_journal: Some(true),
            ..StateSpec::default()
        },
        ..RunSpec::default()
    }
    .validate(2)
    .unwrap_err()
    .to_string();
    assert!(e.contains("state.trie_journal"), "{e}");
}

/// The write-ahead log is on by default wherever the overlay, a trie buffer and one block
/// per write hold, off elsewhere without a word, and asked for where they do not hold it is
/// refused naming the field that rules it out.
#[test]
fn the_write_ahead_log_is_the_default_where_it_can_be_and_refused_by_name_elsewhere() {
    let with = |wal: Option<bool>, state: StateSpec, pipeline: Option<bool>| {
        RunSpec {
            pipeline,
            state: StateSpec { wal, ..state },
            ..RunSpec::default()
        }
        .validate(2)
    };
    let wal = |v: gigagas_engine::ValidRun| match v.state {
        ValidState::Disk { wal, .. } => wal,
        ValidState::Memory => panic!("on disk"),
    };
    assert!(wal(with(None, disk(), None).unwrap()));
    assert!(!wal(with(Some(false), disk(), None).unwrap()));
    let no_buffer = StateSpec {
        trie_buffer: Some(0),
        ..disk()
    };
    let grouped = StateSpec {
        write_group: Some(3),
        ..disk()
    };
    let no_overlay = StateSpec {
        overlay: Some(false),
        ..disk()
    };
    // Off by default where it cannot be.
    assert!(!wal(with(None, no_buffer.clone(), None).unwrap()));
    assert!(!wal(with(None, grouped.clone(), None).unwrap()));
    assert!(!wal(with(None, no_overlay.clone(), None).unwrap()));
    assert!(!wal(with(None, disk(), Some(false)).unwrap()));
    let refused = |state: StateSpec, pipeline: Option<bool>| {
        let e = with(Some(true), state, pipeline).unwrap_err();
        assert!(!e.why.contains("--"), "a flag in the engine's words: {e}");
        (e.field, e.with)
    };
    assert_eq!(
        refused(no_buffer, None),
        ("state.wal", Some("state.trie_buffer"))
    );
    assert_eq!(
        refused(grouped, None),
        ("state.wal", Some("state.write_group"))
    );
    // Given, it runs without the overlay, back to back and with cold reads (which have no
    // trie buffer unless one is given).
    assert!(wal(with(Some(true), no_overlay, None).unwrap()));
    assert!(wal(with(Some(true), disk(), Some(false)).unwrap()));
    let cold = StateSpec {
        cold: true,
        ..disk()
    };
    assert_eq!(
        refused(cold.clone(), Some(false)),
        ("state.wal", Some("state.cold"))
    );
    let buffered_cold = StateSpec {
        trie_buffer: Some(64 << 20),
        ..cold
    };
    assert!(!wal(with(None, buffered_cold.clone(), Some(false)).unwrap()));
    assert!(wal(with(Some(true), buffered_cold, Some(false)).unwrap()));
    // In memory: a disk-only field.
    let e = RunSpec {
        state: StateSpec {
            wal: Some(true),
            ..StateSpec::default()
        },
        ..RunSpec::default()
    }
    .validate(2)
    .unwrap_err();
    assert_eq!(e.field, "state.wal");
}
