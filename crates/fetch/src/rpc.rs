//! A blocking JSON-RPC client over HTTP(S) with bounded retries, a request timeout and a
//! response size limit. Answers come back as raw JSON text so that a block's JSON can be
//! stored exactly as the node sent it.

use crate::{Failure, FetchError};
use serde_json::value::RawValue;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

/// Longest pause between two tries of one request.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Characters of an answer quoted in an error message.
const SNIPPET: usize = 160;

/// Timeout of one try of the first call of a run (`eth_chainId`, which any live node answers
/// at once): a node that accepts connections but never answers fails within
/// [`PROBE_DEADLINE`], not after the full per-request timeout and every retry.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most time the first call of a run takes over all its tries.
pub const PROBE_DEADLINE: Duration = Duration::from_secs(30);

/// Where a client reports each retry as it happens (the CLI: one line on stderr), so that a
/// slow or failing node is visible while it is waited for.
#[derive(Clone)]
pub struct Notice(pub Arc<dyn Fn(&str) + Send + Sync>);

impl Notice {
    /// Prints each notice as a line on stderr.
    pub fn stderr() -> Self {
        Self(Arc::new(|line| eprintln!("{line}")))
    }
}

impl std::fmt::Debug for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notice(..)")
    }
}

pub(crate) struct Client {
    agent: ureq::Agent,
    url: String,
    /// `host[:port]` of the URL: what messages and the marker name (never the path or the
    /// query, which often carry an API key).
    pub host: String,
    attempts: u32,
    backoff: Duration,
    limit: u64,
    timeout: Duration,
    /// Most time one request takes over all its tries.
    deadline: Duration,
    /// When the whole run must end, if ever.
    run_end: Option<Instant>,
    notice: Option<Notice>,
    next_id: AtomicU64,
    pub requests: AtomicU64,
    pub retries: AtomicU64,
}

/// What one try ended with.
enum Try {
    Done(Box<RawValue>),
    /// Worth another try (transport error, 429/5xx, rate-limit error object); the pause the
    /// server asked for, if any.
    Again(String, Option<Duration>),
    Fatal(Failure),
}

/// The first `SNIPPET` characters of `bytes`, printable.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(SNIPPET).collect();
    if text.chars().count() > SNIPPET {
        out.push('…');
    }
    out.escape_debug().to_string()
}

impl Client {
    pub fn new(
        url: &str,
        host: String,
        timeout: Duration,
        attempts: u32,
        backoff: Duration,
        limit: u64,
    ) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("gigagas-fetch/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            agent,
            url: url.to_owned(),
            host,
            attempts: attempts.max(1),
            backoff,
            limit,
            timeout,
            deadline: timeout.saturating_mul(attempts.max(1)),
            run_end: None,
            notice: None,
            next_id: AtomicU64::new(1),
            requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        }
    }

    /// Sets the most time one request takes over all its tries (by default the timeout times
    /// the tries).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets when the whole run must end: no try starts, and none runs, past it.
    pub fn with_run_end(mut self, end: Option<Instant>) -> Self {
        self.run_end = end;
        self
    }

    /// Sets where retries are reported as they happen.
    pub fn with_notice(mut self, notice: Option<Notice>) -> Self {
        self.notice = notice;
        self
    }

    /// The first call of a run: [`Self::call`] with [`PROBE_TIMEOUT`] per try and
    /// [`PROBE_DEADLINE`] in all, so that a node that never answers is named in seconds.
    pub fn probe(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<Box<RawValue>, FetchError> {
        self.call_within(
            method,
            params,
            None,
            self.timeout.min(PROBE_TIMEOUT),
            self.deadline.min(PROBE_DEADLINE),
        )
    }

    /// Calls `method` with `params`; `block` is the block the call is for (for messages).
    /// Transport errors, HTTP 429 and 5xx and JSON-RPC rate-limit errors (-32005) are tried
    /// again after an exponential back-off, at most `attempts` tries in all. The result is
    /// returned as raw JSON (possibly `null`).
    pub fn call(
        &self,
        method: &str,
        params: serde_json::Value,
        block: Option<u64>,
    ) -> Result<Box<RawValue>, FetchError> {
        self.call_within(method, params, block, self.timeout, self.deadline)
    }

    /// [`Self::call`] with `timeout` per try and `deadline` over all tries (and never past the
    /// run's end). Each retry is reported to the notice as it happens.
    fn call_within(
        &self,
        method: &str,
        params: serde_json::Value,
        block: Option<u64>,
        timeout: Duration,
        deadline: Duration,
    ) -> Result<Box<RawValue>, FetchError> {
        let fail = |what| FetchError::Rpc {
            block,
            method: method.to_owned(),
            host: self.host.clone(),
            what,
        };
        let start = Instant::now();
        let request_end = start + deadline;
        let (end, stop) = match self.run_end {
            Some(run_end) if run_end < request_end => (run_end, "the run's deadline passed"),
            _ => (request_end, "the deadline of one request passed"),
        };
        let mut last = String::new();
        let mut tries = 0;
        let mut why = "every try was used";
        for attempt in 1..=self.attempts {
            let now = Instant::now();
            if now >= end {
                why = stop;
                break;
            }
            if attempt > 1 {
                self.retries.fetch_add(1, Ordering::Relaxed);
            }
            tries = attempt;
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": method,
                "params": params,
            });
            self.requests.fetch_add(1, Ordering::Relaxed);
            match self.try_once(id, &body.to_string(), timeout.min(end - now)) {
                Try::Done(result) => return Ok(result),
                Try::Fatal(what) => return Err(fail(what)),
                Try::Again(reason, asked) => {
                    last = reason;
                    if attempt < self.attempts {
                        let exp = self
                            .backoff
                            .saturating_mul(1u32 << (attempt - 1).min(16))
                            .min(MAX_BACKOFF);
                        let pause = asked.map_or(exp, |a| a.min(MAX_BACKOFF));
                        if Instant::now() + pause >= end {
                            why = stop;
                            break;
                        }
                        if let Some(Notice(notice)) = &self.notice {
                            notice(&format!(
                                "node {}: {}{method}: try {attempt} of {} failed ({last}); trying again in {:.1} s",
                                self.host,
                                block.map(|b| format!("block {b}: ")).unwrap_or_default(),
                                self.attempts,
                                pause.as_secs_f64()
                            ));
                        }
                        std::thread::sleep(pause);
                    }
                }
            }
        }
        Err(fail(Failure::GaveUp {
            attempts: tries,
            why: format!(
                "in {:.1} s: {why} (at most {} tries of {:.0} s each, {:.0} s in all: --retries, --timeout); last: {last}",
                start.elapsed().as_secs_f64(),
                self.attempts,
                timeout.as_secs_f64(),
                deadline.as_secs_f64()
            ),
        }))
    }

    fn try_once(&self, id: u64, body: &str, timeout: Duration) -> Try {
        let response = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("content-type", "application/json")
            .send(body);
        let mut response = match response {
            Ok(r) => r,
            Err(e) => return transport(e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let bytes = match response
            .body_mut()
            .with_config()
            .limit(self.limit)
            .read_to_vec()
        {
            Ok(b) if (b.len() as u64) <= self.limit => b,
            Ok(_) | Err(ureq::Error::BodyExceedsLimit(_)) => {
                return Try::Fatal(Failure::TooLarge { limit: self.limit })
            }
            Err(e) => return transport(e),
        };
        if status == 429 || (500..=599).contains(&status) {
            return Try::Again(format!("HTTP {status}: {}", snippet(&bytes)), retry_after);
        }
        if !(200..=299).contains(&status) {
            return Try::Fatal(Failure::Http {
                status,
                body: snippet(&bytes),
            });
        }
        parse_answer(id, &bytes)
    }
}

fn transport(e: ureq::Error) -> Try {
    use ureq::Error as E;
    match e {
        E::BodyExceedsLimit(limit) => Try::Fatal(Failure::TooLarge { limit }),
        E::Io(_)
        | E::Timeout(_)
        | E::ConnectionFailed
        | E::HostNotFound
        | E::Protocol(_)
        | E::Tls(_) => Try::Again(format!("transport error: {e}"), None),
        other => Try::Fatal(Failure::Transport(other.to_string())),
    }
}

/// Parses a JSON-RPC answer to the request with `id`.
fn parse_answer(id: u64, bytes: &[u8]) -> Try {
    let nonsense = |what: String| Try::Fatal(Failure::Nonsense(what));
    let mut fields: HashMap<String, Box<RawValue>> = match serde_json::from_slice(bytes) {
        Ok(f) => f,
        Err(e) => {
            return nonsense(format!(
                "not a JSON-RPC answer object ({e}); it begins \"{}\"",
                snippet(bytes)
            ))
        }
    };
    if let Some(error) = fields.remove("error") {
        #[derive(serde::Deserialize)]
        struct ErrorObject {
            code: i64,
            #[serde(default)]
            message: String,
        }
        return match serde_json::from_str::<ErrorObject>(error.get()) {
            // -32005: "limit exceeded", the usual rate-limit answer of hosted nodes.
            Ok(obj) if obj.code == -32005 => Try::Again(
                format!("JSON-RPC error {}: {}", obj.code, obj.message),
                None,
            ),
            Ok(obj) => Try::Fatal(Failure::Refused {
                code: obj.code,
                message: obj.message,
            }),
            Err(_) => nonsense(format!(
                "malformed JSON-RPC error object {}",
                snippet(error.get().as_bytes())
            )),
        };
    }
    match fields.get("id").map(|v| v.get()) {
        Some(got) if got == id.to_string() || got == format!("\"{id}\"") => {}
        got => {
            return nonsense(format!(
                "answer id {} does not match the request id {id}",
                got.unwrap_or("(none)")
            ))
        }
    }
    match fields.remove("result") {
        Some(result) => Try::Done(result),
        None => nonsense("the answer has neither `result` nor `error`".into()),
    }
}
