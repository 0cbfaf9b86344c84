//! EIP-7610: contract creation onto an address with non-empty storage collides.
//!
//! revm 43's `JournalInner::create_account_checkpoint` only checks code and nonce. This
//! journal wraps revm's [`Journal`] unchanged and adds the storage check in
//! `create_account_checkpoint`, which `make_create_frame` calls for the CREATE/CREATE2 opcodes
//! and for a contract-creation transaction's first frame alike — after the caller nonce bump
//! and the warm load of the target, before any value transfer: exactly the spec's order.

use alloy_primitives::{Address, Bytes, B256, U256};
use gigagas_data::PreState;
use revm::{
    context::{
        journaled_state::{
            account::JournaledAccount, AccountInfoLoad, AccountLoad, JournalCheckpoint,
            JournalLoadError, StateLoad, TransferError,
        },
        Journal, JournalTr,
    },
    context_interface::context::{SStoreResult, SelfDestructResult},
    database::{State, WrapDatabaseRef},
    database_interface::Database,
    primitives::{
        hardfork::SpecId, AddressMap, AddressSet, HashSet, Log, StorageKey, StorageValue,
    },
    state::{Account, Bytecode, EvmState},
    JournalEntry,
};

/// Whether an account holds non-zero storage in the state before the running transaction.
pub trait StorageProbe {
    /// `true` when `address` has at least one non-zero storage slot.
    fn has_storage(&self, address: Address) -> bool;
}

impl StorageProbe for PreState {
    fn has_storage(&self, address: Address) -> bool {
        self.account(&address).is_some_and(|a| a.has_storage())
    }
}

impl<T: StorageProbe + ?Sized> StorageProbe for &T {
    fn has_storage(&self, address: Address) -> bool {
        (**self).has_storage(address)
    }
}

impl<T: StorageProbe + ?Sized> StorageProbe for &mut T {
    fn has_storage(&self, address: Address) -> bool {
        (**self).has_storage(address)
    }
}

impl<T: StorageProbe + revm::DatabaseRef> StorageProbe for WrapDatabaseRef<T> {
    fn has_storage(&self, address: Address) -> bool {
        self.0.has_storage(address)
    }
}

/// revm's block `State`: its cache is authoritative when the account's storage is known
/// (destroyed or created in this block, or known not to exist); otherwise the database below.
impl<DB: StorageProbe> StorageProbe for State<DB> {
    fn has_storage(&self, address: Address) -> bool {
        if let Some(cached) = self.cache.accounts.get(&address) {
            if cached.status.is_storage_known() {
                return cached
                    .account
                    .as_ref()
                    .is_some_and(|a| a.storage.values().any(|v| !v.is_zero()));
            }
        }
        self.database.has_storage(address)
    }
}

/// revm's [`Journal`] with the EIP-7610 storage check on contract creation.
#[derive(Debug, Clone)]
pub struct Eip7610Journal<DB: Database>(pub Journal<DB>);

impl<DB: Database + StorageProbe> JournalTr for Eip7610Journal<DB> {
    type Database = DB;
    type State = EvmState;
    type JournaledAccount<'a>
        = JournaledAccount<'a, DB, JournalEntry>
    where
        DB: 'a;

    fn new(database: DB) -> Self {
        Self(Journal::new(database))
    }

    #[inline]
    fn create_account_checkpoint(
        &mut self,
        caller: Address,
        address: Address,
        balance: U256,
        spec_id: SpecId,
    ) -> Result<JournalCheckpoint, TransferError> {
        // The target was just loaded (warm) by `make_create_frame`. An account created in
        // this transaction has fresh storage (and a nonce, caught below).
        let created_here = self
            .0
            .inner
            .state
            .get(&address)
            .is_some_and(|a| a.is_created());
        if !created_here && self.0.database.has_storage(address) {
            return Err(TransferError::CreateCollision);
        }
        self.0
            .create_account_checkpoint(caller, address, balance, spec_id)
    }

    #[inline]
    fn db_and_state(&self) -> (&Self::Database, &Self::State) {
        self.0.db_and_state()
    }
    #[inline]
    fn db_and_state_mut(&mut self) -> (&mut Self::Database, &mut Self::State) {
        self.0.db_and_state_mut()
    }
    #[inline]
    fn sload(
        &mut self,
        address: Address,
        key: StorageKey,
    ) -> Result<StateLoad<StorageValue>, DB::Error> {
        self.0.sload(address, key)
    }
    #[inline]
    fn sload_skip_cold_load(
        &mut self,
        address: Address,
        key: StorageKey,
        skip_cold_load: bool,
    ) -> Result<StateLoad<StorageValue>, JournalLoadError<DB::Error>> {
        self.0.sload_skip_cold_load(address, key, skip_cold_load)
    }
    #[inline]
    fn sstore(
        &mut self,
        address: Address,
        key: StorageKey,
        value: StorageValue,
    ) -> Result<StateLoad<SStoreResult>, DB::Error> {
        self.0.sstore(address, key, value)
    }
    #[inline]
    fn sstore_skip_cold_load(
        &mut self,
        address: Address,
        key: StorageKey,
        value: StorageValue,
        skip_cold_load: bool,
    ) -> Result<StateLoad<SStoreResult>, JournalLoadError<DB::Error>> {
        self.0
            .sstore_skip_cold_load(address, key, value, skip_cold_load)
    }
    #[inline]
    fn tload(&mut self, address: Address, key: StorageKey) -> StorageValue {
        self.0.tload(address, key)
    }
    #[inline]
    fn tstore(&mut self, address: Address, key: StorageKey, value: StorageValue) {
        self.0.tstore(address, key, value)
    }
    #[inline]
    fn log(&mut self, log: Log) {
        self.0.log(log)
    }
    #[inline]
    fn take_logs(&mut self) -> Vec<Log> {
        self.0.take_logs()
    }
    #[inline]
    fn logs(&self) -> &[Log] {
        self.0.logs()
    }
    #[inline]
    fn selfdestruct(
        &mut self,
        address: Address,
        target: Address,
        skip_cold_load: bool,
    ) -> Result<StateLoad<SelfDestructResult>, JournalLoadError<DB::Error>> {
        self.0.selfdestruct(address, target, skip_cold_load)
    }
    #[inline]
    fn warm_access_list(&mut self, access_list: AddressMap<HashSet<StorageKey>>) {
        self.0.warm_access_list(access_list)
    }
    #[inline]
    fn warm_coinbase_account(&mut self, address: Address) {
        self.0.warm_coinbase_account(address)
    }
    #[inline]
    fn warm_precompiles(&mut self, addresses: &AddressSet) {
        self.0.warm_precompiles(addresses)
    }
    #[inline]
    fn precompile_addresses(&self) -> &AddressSet {
        self.0.precompile_addresses()
    }
    #[inline]
    fn set_spec_id(&mut self, spec_id: SpecId) {
        self.0.set_spec_id(spec_id)
    }
    #[inline]
    fn set_eip7708_config(&mut self, disabled: bool, eip8246_delayed_clear_disabled: bool) {
        self.0
            .set_eip7708_config(disabled, eip8246_delayed_clear_disabled)
    }
    #[inline]
    fn touch_account(&mut self, address: Address) {
        self.0.touch_account(address)
    }
    #[inline]
    fn transfer(
        &mut self,
        from: Address,
        to: Address,
        balance: U256,
    ) -> Result<Option<TransferError>, DB::Error> {
        self.0.transfer(from, to, balance)
    }
    #[inline]
    fn transfer_loaded(
        &mut self,
        from: Address,
        to: Address,
        balance: U256,
    ) -> Option<TransferError> {
        self.0.transfer_loaded(from, to, balance)
    }
    #[inline]
    #[allow(deprecated)]
    fn caller_accounting_journal_entry(
        &mut self,
        address: Address,
        old_balance: U256,
        bump_nonce: bool,
    ) {
        self.0
            .caller_accounting_journal_entry(address, old_balance, bump_nonce)
    }
    #[inline]
    fn balance_incr(&mut self, address: Address, balance: U256) -> Result<(), DB::Error> {
        self.0.balance_incr(address, balance)
    }
    #[inline]
    #[allow(deprecated)]
    fn nonce_bump_journal_entry(&mut self, address: Address) {
        self.0.nonce_bump_journal_entry(address)
    }
    #[inline]
    fn load_account(&mut self, address: Address) -> Result<StateLoad<&Account>, DB::Error> {
        self.0.load_account(address)
    }
    #[inline]
    fn load_account_with_code(
        &mut self,
        address: Address,
    ) -> Result<StateLoad<&Account>, DB::Error> {
        self.0.load_account_with_code(address)
    }
    #[inline]
    fn load_account_delegated(
        &mut self,
        address: Address,
    ) -> Result<StateLoad<AccountLoad>, DB::Error> {
        self.0.load_account_delegated(address)
    }
    #[inline]
    fn load_account_mut_skip_cold_load(
        &mut self,
        address: Address,
        skip_cold_load: bool,
    ) -> Result<StateLoad<Self::JournaledAccount<'_>>, JournalLoadError<DB::Error>> {
        self.0
            .load_account_mut_skip_cold_load(address, skip_cold_load)
    }
    #[inline]
    fn load_account_mut_optional_code(
        &mut self,
        address: Address,
        load_code: bool,
    ) -> Result<StateLoad<Self::JournaledAccount<'_>>, DB::Error> {
        self.0.load_account_mut_optional_code(address, load_code)
    }
    #[inline]
    fn set_code_with_hash(&mut self, address: Address, code: Bytecode, hash: B256) {
        self.0.set_code_with_hash(address, code, hash)
    }
    #[inline]
    fn code(&mut self, address: Address) -> Result<StateLoad<Bytes>, DB::Error> {
        self.0.code(address)
    }
    #[inline]
    fn code_hash(&mut self, address: Address) -> Result<StateLoad<B256>, DB::Error> {
        self.0.code_hash(address)
    }
    #[inline]
    fn checkpoint(&mut self) -> JournalCheckpoint {
        self.0.checkpoint()
    }
    #[inline]
    fn checkpoint_commit(&mut self) {
        self.0.checkpoint_commit()
    }
    #[inline]
    fn checkpoint_revert(&mut self, checkpoint: JournalCheckpoint) {
        self.0.checkpoint_revert(checkpoint)
    }
    #[inline]
    fn depth(&self) -> usize {
        self.0.depth()
    }
    #[inline]
    fn commit_tx(&mut self) {
        self.0.commit_tx()
    }
    #[inline]
    fn discard_tx(&mut self) {
        self.0.discard_tx()
    }
    #[inline]
    fn finalize(&mut self) -> Self::State {
        self.0.finalize()
    }
    #[inline]
    fn load_account_info_skip_cold_load(
        &mut self,
        address: Address,
        load_code: bool,
        skip_cold_load: bool,
    ) -> Result<AccountInfoLoad<'_>, JournalLoadError<DB::Error>> {
        self.0
            .load_account_info_skip_cold_load(address, load_code, skip_cold_load)
    }
}

/// A mainnet context whose journal applies EIP-7610.
pub type Eip7610Context<DB> = revm::Context<
    revm::context::BlockEnv,
    revm::context::TxEnv,
    revm::context::CfgEnv,
    DB,
    Eip7610Journal<DB>,
    (),
>;

/// `Context::mainnet().with_db(db).with_block(block).with_cfg(cfg)` with the EIP-7610 journal.
pub fn context<DB: Database + StorageProbe>(
    db: DB,
    block: revm::context::BlockEnv,
    cfg: revm::context::CfgEnv,
) -> Eip7610Context<DB> {
    Eip7610Context::<DB>::new(db, SpecId::default())
        .with_block(block)
        .with_cfg(cfg)
}
