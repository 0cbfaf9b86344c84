//! A trie built from a sorted stream of leaves in memory bounded by the trie's depth: the
//! branch nodes [`crate::from_scratch`] would store, handed out one by one as each completes
//! (children before their parent), and the root at the end. What a store's bulk load and a
//! from-scratch verification of a store too large for memory need.

use crate::{node::BranchNode, update::Sub};
use alloy_primitives::B256;
use alloy_trie::{Nibbles, TrieMask};

/// Why a streamed build stopped.
#[derive(Debug, thiserror::Error)]
pub enum StreamError<E> {
    /// The leaves did not come in strictly increasing key order.
    #[error("leaf {key} does not sort after the previous leaf {previous} (the stream must be sorted by key, without repeats)")]
    NotSorted {
        /// The previous key.
        previous: B256,
        /// The key that came after it.
        key: B256,
    },
    /// A leaf value was empty (a zero slot is no leaf: leave it out).
    #[error("leaf {0} has an empty value")]
    EmptyValue(B256),
    /// The node sink failed.
    #[error(transparent)]
    Sink(E),
    /// Parts given to [`join_parts`] whose keys do not each share one first nibble, in
    /// increasing order.
    #[error(
        "trie parts to join must each hold keys of one first nibble, in increasing nibble order"
    )]
    PartsOverlap,
}

/// An open branch on the path of the latest leaf: its position and the children it has so far.
struct Frame {
    path: Nibbles,
    children: Vec<(u8, Sub)>,
}

/// Builds one trie (the account trie or one storage trie) from leaves pushed in increasing
/// key order, calling `sink(path, node)` for every branch node as soon as it is complete. The
/// nodes are exactly those [`crate::from_scratch`] stores for the same leaves (tested), handed
/// out children before parents; memory holds one leaf and at most 64 open branches.
pub struct StreamBuilder<F> {
    sink: F,
    /// Open branches, shallowest first; each one's path is a prefix of the next one's.
    stack: Vec<Frame>,
    /// The latest leaf, placed once the next key (or the end) says where.
    pending: Option<(B256, Vec<u8>)>,
    /// The root subtree, once the stream has ended.
    root: Option<Sub>,
    leaves: u64,
    nodes: u64,
    buf: Vec<u8>,
}

impl<F, E> StreamBuilder<F>
where
    F: FnMut(Nibbles, BranchNode) -> Result<(), E>,
{
    /// A builder handing each complete branch node to `sink`.
    pub fn new(sink: F) -> Self {
        Self {
            sink,
            stack: Vec::with_capacity(65),
            pending: None,
            root: None,
            leaves: 0,
            nodes: 0,
            buf: Vec::with_capacity(600),
        }
    }

    /// Leaves pushed so far.
    pub fn leaves(&self) -> u64 {
        self.leaves
    }

    /// Branch nodes handed to the sink so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Adds a leaf: `key` (hashed) must sort after every earlier one; `value` is the leaf's
    /// RLP value (non-empty).
    pub fn push(&mut self, key: B256, value: Vec<u8>) -> Result<(), StreamError<E>> {
        if value.is_empty() {
            return Err(StreamError::EmptyValue(key));
        }
        if let Some((previous, _)) = &self.pending {
            if *previous >= key {
                return Err(StreamError::NotSorted {
                    previous: *previous,
                    key,
                });
            }
        }
        self.leaves += 1;
        match self.pending.replace((key, value)) {
            None => Ok(()),
            Some((prev, prev_value)) => {
                let next = Nibbles::unpack(key);
                let prev = Nibbles::unpack(prev);
                let lcp = prev.common_prefix_length(&next);
                self.place(prev, prev_value, Some(lcp))
            }
        }
    }

    /// Places the pending leaf `key`, whose common prefix with the next key is `next_lcp`
    /// nibbles long (`None`: it is the last leaf), and closes every branch the next key
    /// cannot reach.
    fn place(
        &mut self,
        key: Nibbles,
        value: Vec<u8>,
        next_lcp: Option<usize>,
    ) -> Result<(), StreamError<E>> {
        let leaf = Sub::Leaf { key, value };
        match (next_lcp, self.stack.last().map(|f| f.path.len())) {
            // The leaf and the next key share more than the deepest open branch: a new
            // branch opens where they part.
            (Some(l), None) => self.open(key.slice(..l), leaf),
            (Some(l), Some(t)) if l > t => self.open(key.slice(..l), leaf),
            (_, Some(t)) => self.add(key.get_unchecked(t), leaf),
            // The only leaf: it is the root.
            (None, None) => {
                self.root = Some(leaf);
                return Ok(());
            }
        }
        self.close(&key, next_lcp)
    }

    fn open(&mut self, path: Nibbles, sub: Sub) {
        let nibble = sub_key_nibble(&sub, path.len());
        self.stack.push(Frame {
            path,
            children: vec![(nibble, sub)],
        });
    }

    fn add(&mut self, nibble: u8, sub: Sub) {
        if let Some(frame) = self.stack.last_mut() {
            frame.children.push((nibble, sub));
        }
    }

    /// Closes the open branches deeper than `next_lcp` (all of them at the end), each into
    /// its parent (opening that parent at `next_lcp` when it is not open yet); the last one
    /// closed at the end is the root.
    fn close(&mut self, key: &Nibbles, next_lcp: Option<usize>) -> Result<(), StreamError<E>> {
        loop {
            let Some(top) = self.stack.last() else {
                return Ok(());
            };
            if next_lcp.is_some_and(|l| top.path.len() <= l) {
                return Ok(());
            }
            let Some(frame) = self.stack.pop() else {
                return Ok(());
            };
            let sub = self.compose(frame)?;
            match (next_lcp, self.stack.last().map(|f| f.path.len())) {
                (Some(l), Some(t)) if t >= l => self.add(key.get_unchecked(t), sub),
                (Some(l), _) => self.open(key.slice(..l), sub),
                (None, Some(t)) => self.add(key.get_unchecked(t), sub),
                (None, None) => {
                    self.root = Some(sub);
                    return Ok(());
                }
            }
        }
    }

    /// The branch node of a complete frame, handed to the sink.
    fn compose(&mut self, frame: Frame) -> Result<Sub, StreamError<E>> {
        let at = frame.path;
        let mut node = BranchNode {
            state_mask: TrieMask::default(),
            children: Vec::with_capacity(frame.children.len()),
        };
        for (nibble, sub) in frame.children {
            if let Some(child) = sub.to_child(at.len() + 1, &mut self.buf) {
                node.state_mask.set_bit(nibble);
                node.children.push(child);
            }
        }
        let branch_ref = node.rlp(&mut self.buf);
        self.nodes += 1;
        (self.sink)(at, node).map_err(StreamError::Sink)?;
        Ok(Sub::Branch {
            path: at,
            branch_ref,
        })
    }

    /// Ends the stream: places the last leaf, closes every branch and returns the root hash
    /// (the empty root for no leaves) with the leaf and node counts.
    pub fn finish(self) -> Result<Built, StreamError<E>> {
        let part = self.finish_part()?;
        Ok(Built {
            root: part.sub.root_hash(),
            leaves: part.leaves,
            nodes: part.nodes,
        })
    }

    /// Ends the stream of one part of a trie whose keys all share one first nibble: every
    /// branch node below the trie's root handed to the sink, the part's top kept for
    /// [`join_parts`]. Parts of the 16 first nibbles can be built on 16 threads.
    pub fn finish_part(mut self) -> Result<Part, StreamError<E>> {
        if let Some((key, value)) = self.pending.take() {
            self.place(Nibbles::unpack(key), value, None)?;
        }
        Ok(Part {
            sub: self.root.take().unwrap_or(Sub::Empty),
            leaves: self.leaves,
            nodes: self.nodes,
        })
    }
}

/// One part of a trie split by the first nibble of its keys ([`StreamBuilder::finish_part`]).
pub struct Part {
    sub: Sub,
    leaves: u64,
    nodes: u64,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part")
            .field("leaves", &self.leaves)
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// The trie of all the leaves of `parts` (each built from keys of one first nibble, given in
/// increasing nibble order): what one [`StreamBuilder`] over all of them would give. The root
/// branch node, when there is one (leaves under two first nibbles or more), is handed to
/// `sink`; the counts are the parts' summed, that node included.
pub fn join_parts<E>(
    parts: Vec<Part>,
    sink: impl FnMut(Nibbles, BranchNode) -> Result<(), E>,
) -> Result<Built, StreamError<E>> {
    let (mut leaves, mut nodes) = (0, 0);
    let mut children: Vec<(u8, Sub)> = Vec::with_capacity(16);
    for part in parts {
        leaves += part.leaves;
        nodes += part.nodes;
        let nibble = match &part.sub {
            Sub::Empty => continue,
            Sub::Leaf { key, .. } => key.get_unchecked(0),
            Sub::Branch { path, .. } if !path.is_empty() => path.get_unchecked(0),
            // A branch at the root: its keys do not share a first nibble.
            Sub::Branch { .. } => return Err(StreamError::PartsOverlap),
        };
        if children.last().is_some_and(|(last, _)| *last >= nibble) {
            return Err(StreamError::PartsOverlap);
        }
        children.push((nibble, part.sub));
    }
    let root = match children.len() {
        0 => Sub::Empty,
        1 => children.pop().map_or(Sub::Empty, |(_, sub)| sub),
        _ => {
            let mut builder = StreamBuilder::new(sink);
            let sub = builder.compose(Frame {
                path: Nibbles::default(),
                children,
            })?;
            nodes += 1;
            sub
        }
    };
    Ok(Built {
        root: root.root_hash(),
        leaves,
        nodes,
    })
}

/// What a finished [`StreamBuilder`] built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    /// The trie's root hash.
    pub root: B256,
    /// Leaves pushed.
    pub leaves: u64,
    /// Branch nodes handed to the sink.
    pub nodes: u64,
}

/// The nibble at `depth` of a subtree's key or path (the child slot it takes in a branch at
/// `depth`).
fn sub_key_nibble(sub: &Sub, depth: usize) -> u8 {
    match sub {
        Sub::Leaf { key, .. } => key.get_unchecked(depth),
        Sub::Branch { path, .. } => path.get_unchecked(depth),
        Sub::Empty => 0,
    }
}
