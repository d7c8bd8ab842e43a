package io.quorumkv.bench;

import io.quorumkv.storage.StorageException;
import org.jspecify.annotations.Nullable;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * One scan's native handles: an iterator positioned at the start key and bounded by the
 * end key. {@link #next()} and {@link #close()} are synchronized because a cancel can
 * arrive on another thread than the one pulling; after close, {@code next} answers the
 * end instead of touching freed memory.
 */
final class RocksScanCursor {

	private final ReadOptions readOptions;

	private final @Nullable Slice upperBound;

	private final RocksIterator iterator;

	private final Runnable onClose;

	private boolean closed;

	RocksScanCursor(RocksDB db, byte[] fromInclusive, byte @Nullable [] toExclusive, Runnable onClose) {
		this.onClose = onClose;
		this.readOptions = new ReadOptions();
		this.upperBound = (toExclusive != null) ? new Slice(toExclusive) : null;
		if (this.upperBound != null) {
			this.readOptions.setIterateUpperBound(this.upperBound);
		}
		this.iterator = db.newIterator(this.readOptions);
		this.iterator.seek(fromInclusive);
	}

	/** The next key and stored value, or {@code null} at the end. */
	synchronized byte @Nullable [][] next() {
		if (this.closed) {
			return null;
		}
		if (!this.iterator.isValid()) {
			try {
				this.iterator.status();
			}
			catch (RocksDBException ex) {
				throw new StorageException("RocksDB scan failed", ex);
			}
			return null;
		}
		byte[][] pair = { this.iterator.key(), this.iterator.value() };
		this.iterator.next();
		return pair;
	}

	synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.iterator.close();
		this.readOptions.close();
		if (this.upperBound != null) {
			this.upperBound.close();
		}
		this.onClose.run();
	}

}
