//! A tiny JSON-RPC node for tests: a thread on 127.0.0.1:0 that answers POSTs with blocks
//! and `prestateTracer` results built from the bundled mainnet sample. Shared with the CLI's
//! fetch test (`#[path]`-included there).
#![allow(dead_code)]

use gigagas_data::DataSource;
use serde_json::{json, Value};
use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub params: Value,
    /// The block number of the first parameter, when it is one.
    pub block: Option<u64>,
}

/// What the server sends back.
pub enum Reply {
    /// `200` with this JSON-RPC result.
    Result(Value),
    /// `200` with a JSON-RPC error object.
    Error(i64, &'static str),
    /// This status and body.
    Status(u16, String),
    /// `200` with this raw body.
    Raw(String),
    /// Headers promising a long body, a few bytes of it, then the connection closes.
    CloseMidway,
    /// No answer for this long, then the connection closes.
    Stall(std::time::Duration),
}

/// Decides the answer to a call; `None` = the normal answer.
pub type Override = Box<dyn Fn(&Call) -> Option<Reply> + Send + Sync>;

/// The sample's data the node serves.
pub struct Chain {
    /// Block JSON text by number.
    pub blocks: BTreeMap<u64, String>,
    /// Pre-state JSON (the sample's `pre_state.json`) by number.
    pub pre_states: BTreeMap<u64, Value>,
    pub codes: BTreeMap<String, String>,
    pub block_hashes: BTreeMap<u64, String>,
}

impl Chain {
    pub fn sample(numbers: &[u64]) -> Self {
        let source = DataSource::embedded().unwrap();
        let read = |rel: &str| String::from_utf8(source.read(rel).unwrap()).unwrap();
        let mut blocks = BTreeMap::new();
        let mut pre_states = BTreeMap::new();
        for n in numbers {
            blocks.insert(*n, read(&format!("blocks/{n}/block.json")));
            pre_states.insert(
                *n,
                serde_json::from_str(&read(&format!("blocks/{n}/pre_state.json"))).unwrap(),
            );
        }
        let codes = serde_json::from_str(&read("bytecodes.json")).unwrap();
        let hashes: BTreeMap<String, String> =
            serde_json::from_str(&read("block_hashes.json")).unwrap();
        Self {
            blocks,
            pre_states,
            codes,
            block_hashes: hashes
                .into_iter()
                .map(|(k, v)| (k.parse().unwrap(), v))
                .collect(),
        }
    }

    fn block_field(&self, n: u64, field: &str) -> Option<String> {
        let v: Value = serde_json::from_str(self.blocks.get(&n)?).unwrap();
        v[field].as_str().map(str::to_owned)
    }

    /// The hash the node claims for block `k`: the sample's where it knows it, else a made-up
    /// one (consistent, so parent links hold).
    pub fn hash_of(&self, k: u64) -> String {
        if let Some(h) = self.block_field(k, "hash") {
            return h;
        }
        if let Some(h) = self.block_field(k + 1, "parentHash") {
            return h;
        }
        if let Some(h) = self.block_hashes.get(&k) {
            return h.clone();
        }
        format!("0x5e{k:062x}")
    }

    /// A `prestateTracer` answer for block `n`: one entry per transaction; the first carries
    /// the sample's whole pre-state, later ones the same accounts with changed values (which a
    /// correct merge ignores: the first transaction's values are the state before the block).
    pub fn trace(&self, n: u64) -> Value {
        let block: Value = serde_json::from_str(&self.blocks[&n]).unwrap();
        let txs = block["transactions"].as_array().unwrap();
        let pre = self.pre_states[&n].as_object().unwrap();
        let mut first = serde_json::Map::new();
        let mut later = serde_json::Map::new();
        for (addr, acc) in pre {
            let mut traced = serde_json::Map::new();
            traced.insert("balance".into(), acc["balance"].clone());
            let nonce = match &acc["nonce"] {
                Value::String(s) => {
                    json!(u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap())
                }
                v => v.clone(),
            };
            if nonce != json!(0) {
                traced.insert("nonce".into(), nonce);
            }
            if let Some(h) = acc.get("code_hash").and_then(Value::as_str) {
                if let Some(code) = self.codes.get(h) {
                    traced.insert("code".into(), json!(code));
                    traced.insert("codeHash".into(), json!(h));
                }
            }
            if let Some(storage) = acc.get("storage").and_then(Value::as_object) {
                if !storage.is_empty() {
                    traced.insert("storage".into(), Value::Object(storage.clone()));
                }
            }
            let mut changed = traced.clone();
            changed.insert("balance".into(), json!("0x1234"));
            if let Some(Value::Object(storage)) = changed.get_mut("storage") {
                for v in storage.values_mut() {
                    *v = json!(format!("0x{:064x}", 0xdead));
                }
            }
            first.insert(addr.clone(), Value::Object(traced));
            later.insert(addr.clone(), Value::Object(changed));
        }
        let entries: Vec<Value> = txs
            .iter()
            .enumerate()
            .map(|(i, tx)| {
                let result = if i == 0 { &first } else { &later };
                json!({"txHash": tx["hash"], "result": result})
            })
            .collect();
        Value::Array(entries)
    }

    /// The normal answer to `call`.
    pub fn answer(&self, call: &Call) -> Reply {
        let p = &call.params;
        match call.method.as_str() {
            "eth_chainId" => Reply::Result(json!("0x1")),
            "eth_getBlockByNumber" => {
                let n = call.block.expect("a block number");
                if p[1] == json!(true) {
                    match self.blocks.get(&n) {
                        Some(text) => Reply::Result(serde_json::from_str(text).unwrap()),
                        None => Reply::Result(Value::Null),
                    }
                } else {
                    Reply::Result(json!({
                        "number": format!("0x{n:x}"),
                        "hash": self.hash_of(n),
                        "parentHash": self.hash_of(n.saturating_sub(1)),
                    }))
                }
            }
            "debug_traceBlockByNumber" => {
                let n = call.block.expect("a block number");
                assert_eq!(p[1]["tracer"], json!("prestateTracer"));
                if self.blocks.contains_key(&n) {
                    Reply::Result(self.trace(n))
                } else {
                    Reply::Error(-32000, "block not found")
                }
            }
            _ => Reply::Error(-32601, "the method does not exist/is not available"),
        }
    }
}

pub struct Node {
    pub url: String,
    pub calls: Arc<Mutex<Vec<Call>>>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

impl Node {
    /// Starts a node serving `chain`, with `custom` deciding answers first.
    pub fn start(chain: Chain, custom: Option<Override>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new((chain, custom));
        {
            let calls = calls.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = shared.clone();
                    let calls = calls.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &shared.0, shared.1.as_ref(), &calls);
                    });
                }
            });
        }
        Self {
            url: format!("http://{addr}/"),
            calls,
            stop,
            addr,
        }
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// Calls of `method`.
    pub fn count(&self, method: &str) -> usize {
        self.calls().iter().filter(|c| c.method == method).count()
    }
}

fn serve(
    stream: TcpStream,
    chain: &Chain,
    custom: Option<&Override>,
    calls: &Mutex<Vec<Call>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        // Request line and headers.
        let mut length = 0usize;
        let mut first = true;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let line = line.trim_end();
            if line.is_empty() {
                if first {
                    continue;
                }
                break;
            }
            first = false;
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let params = request["params"].clone();
        let block = params[0]
            .as_str()
            .and_then(|s| u64::from_str_radix(s.strip_prefix("0x")?, 16).ok());
        let call = Call {
            method: request["method"].as_str().unwrap_or("").to_owned(),
            params,
            block,
        };
        calls.lock().unwrap().push(call.clone());
        let reply = custom
            .and_then(|f| f(&call))
            .unwrap_or_else(|| chain.answer(&call));
        let id = request["id"].clone();
        let (status, text) = match reply {
            Reply::Result(v) => (
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": v}).to_string(),
            ),
            Reply::Error(code, message) => (
                200,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    .to_string(),
            ),
            Reply::Status(s, body) => (s, body),
            Reply::Raw(body) => (200, body),
            Reply::Stall(pause) => {
                std::thread::sleep(pause);
                return Ok(());
            }
            Reply::CloseMidway => {
                writer.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":",
                )?;
                writer.flush()?;
                return Ok(());
            }
        };
        write!(
            writer,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        )?;
        writer.write_all(text.as_bytes())?;
        writer.flush()?;
    }
}
