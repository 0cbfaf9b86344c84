// gigagas-geth-init writes a genesis.json into a geth data directory the way `geth init`
// does (same chain database, same default path scheme, same genesis block), but streams the
// allocation: `geth init` decodes the whole file into memory first and holds every slot of
// a 10M-slot account twice (JSON map, then the state), which a 24 GiB machine cannot. Here
// the file is read token by token and the state is committed and flushed to disk every
// --chunk slots, so memory is bounded by the chunk, not by the allocation.
//
// Usage: gigagas-geth-init --datadir DIR [--chunk N] [--expect-hash H] genesis.json
//
// It prints the genesis block's hash and state root; with --expect-hash it exits non-zero
// unless the hash is H. The genesis state specification (the whole allocation as JSON, which
// `geth init` also stores) is not written: geth reads it only to dump or re-commit the genesis.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/state"
	"github.com/ethereum/go-ethereum/core/tracing"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/ethereum/go-ethereum/triedb/pathdb"
	"github.com/holiman/uint256"
)

// maxChunk bounds --chunk: each pending slot costs the state a few hundred bytes.
const maxChunk = 20_000_000

func main() {
	datadir := flag.String("datadir", "", "geth data directory (new or empty)")
	chunk := flag.Int("chunk", 1_000_000, "slots committed and flushed to disk at a time (1 to 20,000,000)")
	expect := flag.String("expect-hash", "", "fail unless the genesis block hashes to this")
	flag.Parse()
	if *datadir == "" || flag.NArg() != 1 {
		fail("usage: gigagas-geth-init --datadir DIR [--chunk N] [--expect-hash H] genesis.json")
	}
	if *chunk < 1 || *chunk > maxChunk {
		fail(fmt.Sprintf("--chunk %d: must be 1 to %d", *chunk, maxChunk))
	}
	if err := run(*datadir, flag.Arg(0), *chunk, *expect); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gigagas-geth-init:", msg)
	os.Exit(1)
}

// builder commits the state every `chunk` slots and flushes it to the trie database.
type builder struct {
	sdb     state.Database
	tdb     *triedb.Database
	st      *state.StateDB
	root    common.Hash
	pending int
	chunk   int
	slots   uint64
	start   time.Time
}

func (b *builder) flush() error {
	root, err := b.st.Commit(params.Rules{}, 0)
	if err != nil {
		return fmt.Errorf("state commit: %w", err)
	}
	if root != b.root {
		if err := b.tdb.Commit(root, false); err != nil {
			return fmt.Errorf("trie database commit: %w", err)
		}
	}
	b.root = root
	st, err := state.New(root, b.sdb)
	if err != nil {
		return fmt.Errorf("reopen state at %s: %w", root, err)
	}
	b.st = st
	b.pending = 0
	fmt.Fprintf(os.Stderr, "gigagas-geth-init: %d slots committed (%.0f s), root %s\n", b.slots, time.Since(b.start).Seconds(), root)
	return nil
}

// count counts one account toward the chunk (an allocation of many accounts without storage
// is flushed in chunks too).
func (b *builder) count() error {
	b.pending++
	if b.pending >= b.chunk {
		return b.flush()
	}
	return nil
}

func (b *builder) setState(addr common.Address, key, value common.Hash) error {
	b.st.SetState(addr, key, value)
	b.pending++
	b.slots++
	if b.pending >= b.chunk {
		return b.flush()
	}
	return nil
}

func run(datadir, path string, chunk int, expect string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(file, 1<<20))
	dec.UseNumber()

	cfg := node.DefaultConfig
	cfg.Name = "geth"
	cfg.DataDir = datadir
	cfg.P2P.NoDiscovery = true
	cfg.P2P.MaxPeers = 0
	cfg.IPCPath = ""
	cfg.HTTPHost = ""
	cfg.WSHost = ""
	// A run that failed after its first flush leaves state without a genesis block, which no
	// later run can continue: only a new data directory is taken.
	if _, err := os.Stat(filepath.Join(datadir, "geth", "chaindata")); err == nil {
		return errors.New(datadir + " already holds a chain database (after a failed run, delete the directory)")
	}
	stack, err := node.New(&cfg)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	defer stack.Close()
	db, err := stack.OpenDatabaseWithOptions("chaindata", node.DatabaseOptions{Cache: 512, Handles: 512, MetricsNamespace: "eth/db/chaindata/"})
	if err != nil {
		return fmt.Errorf("chain database: %w", err)
	}
	defer db.Close()
	if rawdb.ReadCanonicalHash(db, 0) != (common.Hash{}) {
		return errors.New(datadir + " already holds a genesis block")
	}
	pcfg := *pathdb.Defaults
	pcfg.JournalDirectory = stack.ResolvePath("triedb")
	tdb := triedb.NewDatabase(db, &triedb.Config{PathDB: &pcfg})
	defer tdb.Close()
	sdb := state.NewDatabase(tdb, nil)
	st, err := state.New(types.EmptyRootHash, sdb)
	if err != nil {
		return err
	}
	b := &builder{sdb: sdb, tdb: tdb, st: st, root: types.EmptyRootHash, chunk: chunk, start: time.Now()}

	// The top level: every field but "alloc" is small and decoded as geth decodes it.
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	rest := map[string]json.RawMessage{}
	sawAlloc := false
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return err
		}
		if key != "alloc" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			rest[key] = raw
			continue
		}
		sawAlloc = true
		if err := readAlloc(dec, b); err != nil {
			return fmt.Errorf("alloc: %w", err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if tok, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the genesis object: %v %v", tok, err)
	}
	if !sawAlloc {
		return errors.New("no alloc")
	}
	if err := b.flush(); err != nil {
		return err
	}
	rest["alloc"] = json.RawMessage("{}")
	header, _ := json.Marshal(rest)
	var g core.Genesis
	if err := json.Unmarshal(header, &g); err != nil {
		return fmt.Errorf("genesis header fields: %w", err)
	}
	if g.Config == nil {
		return errors.New("genesis without chain config")
	}
	if g.Number != 0 {
		return errors.New("genesis block number is not 0")
	}
	if err := g.Config.CheckConfigForkOrder(); err != nil {
		return err
	}
	if g.IsUBT() {
		return errors.New("a binary-trie (UBT) genesis: this tool builds the Merkle-Patricia trie only; use geth init")
	}
	if g.Config.Clique != nil && len(g.ExtraData) < 32+crypto.SignatureLength {
		return errors.New("can't start clique chain without signers")
	}
	empty := g.ToBlock()
	h := empty.Header()
	h.Root = b.root
	block := empty.WithSeal(h)
	if expect != "" && block.Hash() != common.HexToHash(expect) {
		return fmt.Errorf("genesis block hashes to %s with state root %s, expected %s", block.Hash(), b.root, expect)
	}
	batch := db.NewBatch()
	rawdb.WriteBlock(batch, block)
	rawdb.WriteReceipts(batch, block.Hash(), block.NumberU64(), nil)
	rawdb.WriteCanonicalHash(batch, block.Hash(), block.NumberU64())
	rawdb.WriteHeadBlockHash(batch, block.Hash())
	rawdb.WriteHeadFastBlockHash(batch, block.Hash())
	rawdb.WriteHeadHeaderHash(batch, block.Hash())
	rawdb.WriteChainConfig(batch, block.Hash(), g.Config)
	if err := batch.Write(); err != nil {
		return err
	}
	fmt.Printf("genesis %s root %s slots %d (%.1f s)\n", block.Hash(), b.root, b.slots, time.Since(b.start).Seconds())
	return nil
}

// readAlloc streams `{ "0xADDR": { "balance":…, "nonce":…, "code":…, "storage": {…} }, … }`.
func readAlloc(dec *json.Decoder, b *builder) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	// geth keeps the last of an address given twice; the storage of the first would already
	// be committed here, so a repeated address is refused instead.
	seen := map[common.Address]struct{}{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return err
		}
		var addr common.UnprefixedAddress
		if err := addr.UnmarshalText([]byte(key)); err != nil {
			return fmt.Errorf("address %q: %w", key, err)
		}
		if _, dup := seen[common.Address(addr)]; dup {
			return fmt.Errorf("address %s is given twice", common.Address(addr))
		}
		seen[common.Address(addr)] = struct{}{}
		if err := readAccount(dec, b, common.Address(addr)); err != nil {
			return fmt.Errorf("%s: %w", common.Address(addr), err)
		}
	}
	return expectDelim(dec, '}')
}

// readAccount reads one account: its storage streamed (readStorage), every other field
// decoded by geth's own types.Account decoder (field names matched as encoding/json matches
// them, the last of a repeated field kept, balance required, nonce and balance in hex or
// decimal), then set as geth's flushAlloc sets them.
func readAccount(dec *json.Decoder, b *builder, addr common.Address) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	// Created even when empty, as geth's flushAlloc does (SetNonce on a new object).
	b.st.CreateAccount(addr)
	fields := map[string]json.RawMessage{}
	var slots []slot
	for dec.More() {
		field, err := stringToken(dec)
		if err != nil {
			return err
		}
		if strings.EqualFold(field, "storage") {
			if slots, err = readStorage(dec, slots); err != nil {
				return err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		fields[strings.ToLower(field)] = raw
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	rest, _ := json.Marshal(fields)
	var account types.Account
	if err := json.Unmarshal(rest, &account); err != nil {
		return err
	}
	if account.Balance.Sign() < 0 {
		return fmt.Errorf("negative balance %s", account.Balance)
	}
	// In hashed-key order (see readStorage); of a key given twice, the last, as geth keeps.
	sort.SliceStable(slots, func(i, j int) bool { return bytes.Compare(slots[i].hash[:], slots[j].hash[:]) < 0 })
	for i, s := range slots {
		if i+1 < len(slots) && slots[i+1].hash == s.hash {
			continue
		}
		if err := b.setState(addr, s.key, s.value); err != nil {
			return err
		}
	}
	b.st.SetBalance(addr, uint256.MustFromBig(account.Balance), tracing.BalanceIncreaseGenesisBalance)
	b.st.SetCode(addr, account.Code, tracing.CodeChangeGenesis)
	b.st.SetNonce(addr, account.Nonce, tracing.NonceChangeGenesis)
	return b.count()
}

// slot is one storage entry with the hash of its key, the order of the account's trie.
type slot struct {
	hash, key, value common.Hash
}

// readStorage reads one account's storage object (or null) into slots. They are set in the
// order of the hashed keys, so each chunk commits one contiguous part of the storage trie (in
// the file's order every chunk would rewrite most of the trie built so far). It holds 96
// bytes per slot of the account while it sorts: ~1 GB for 10M slots, where `geth init` needs
// over 22 GB.
func readStorage(dec *json.Decoder, slots []slot) ([]slot, error) {
	tok, err := dec.Token()
	if err != nil {
		return slots, err
	}
	if tok == nil {
		return slots, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return slots, fmt.Errorf("storage: expected an object, found %v", tok)
	}
	for dec.More() {
		k, err := stringToken(dec)
		if err != nil {
			return slots, err
		}
		v, err := stringToken(dec)
		if err != nil {
			return slots, err
		}
		var s slot
		if err := storageWord(&s.key, k); err != nil {
			return slots, fmt.Errorf("storage key: %w", err)
		}
		if err := storageWord(&s.value, v); err != nil {
			return slots, fmt.Errorf("storage value: %w", err)
		}
		s.hash = crypto.Keccak256Hash(s.key[:])
		slots = append(slots, s)
	}
	return slots, expectDelim(dec, '}')
}

// storageWord decodes a storage key or value as geth's genesis does (core/types storageJSON):
// hex with or without 0x, at most 64 digits, padded on the left.
func storageWord(h *common.Hash, text string) error {
	text = strings.TrimPrefix(text, "0x")
	if len(text) > 64 {
		return fmt.Errorf("too many hex characters in %q", text)
	}
	if _, err := hex.Decode(h[len(h)-len(text)/2:], []byte(text)); err != nil {
		return fmt.Errorf("invalid hex %q", text)
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return fmt.Errorf("unexpected end of file, expected %q", want)
		}
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected a string, found %v", tok)
	}
	return s, nil
}
