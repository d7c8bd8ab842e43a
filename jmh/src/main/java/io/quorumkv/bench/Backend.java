package io.quorumkv.bench;

import java.nio.file.Path;
import java.util.Locale;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.derby.DerbyStorage;
import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2Storage;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.Compression;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;

/**
 * The backends a benchmark can open, each with the settings that make them comparable: no
 * fsync per write, the log forced about every 100 ms where the backend can do that (see
 * {@code docs/benchmarks.md}).
 */
enum Backend {

	/**
	 * QuorumKV's LSM with its defaults (WAL fsync every 100 ms, 64 MiB memtable) but no
	 * block compression, as the RocksDB anchor is set (docs/benchmarks.md);
	 * {@link CompressionBenchmark} measures the codecs.
	 */
	LSM {
		@Override
		Storage open(Path directory) {
			return LsmStorage.open(LsmOptions.defaults(directory).withCompression(Compression.NONE));
		}
	},

	/**
	 * The outside anchor, configured as its users would ({@link RocksSettings}), with
	 * blind writes ({@link RocksWriter.Mode#BLIND}).
	 */
	ROCKSDB {
		@Override
		Storage open(Path directory) {
			return RocksDbStorage.open(directory, RocksWriter.Mode.BLIND);
		}
	},

	/**
	 * The same RocksDB, writing last-write-wins as the LSM does: read, compare versions,
	 * write the winner ({@link RocksWriter.Mode#COMPARE_VERSIONS}). Same files as
	 * {@link #ROCKSDB}, so it shares its prefilled store.
	 */
	ROCKSDB_LWW {
		@Override
		Storage open(Path directory) {
			return RocksDbStorage.open(directory, RocksWriter.Mode.COMPARE_VERSIONS);
		}

		@Override
		Backend dataset() {
			return ROCKSDB;
		}
	},

	/** H2 with its defaults: {@code PERIODIC_SYNC} every 100 ms. */
	H2 {
		@Override
		Storage open(Path directory) {
			return H2Storage.open(H2StorageOptions.defaults(directory));
		}
	},

	/**
	 * Derby without an fsync per commit ({@code NO_SYNC}): Derby has no periodic fsync,
	 * and its default ({@code SYNC_ON_COMMIT}) forces the log on every write, which none
	 * of the others do.
	 */
	DERBY {
		@Override
		Storage open(Path directory) {
			return DerbyStorage
				.open(DerbyStorageOptions.defaults(directory).withDurability(DerbyStorageOptions.Durability.NO_SYNC));
		}
	};

	/** Opens (creating when empty) the backend's store in {@code directory}. */
	abstract Storage open(Path directory);

	/** The backend whose prefilled store this one opens (itself unless it shares one). */
	Backend dataset() {
		return this;
	}

	/** The name used in {@code @Param} and in folder names: {@code rocksdb-lww}. */
	String id() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	static Backend of(String id) {
		return valueOf(id.toUpperCase(Locale.ROOT).replace('-', '_'));
	}

}
