package io.quorumkv.storage.lsm;

import io.quorumkv.storage.lsm.memtable.MemTable;
import io.quorumkv.storage.lsm.wal.WalWriter;

/** A memtable and the WAL segment that holds the same writes. */
record MemTableSlot(MemTable memtable, WalWriter wal) {
}
