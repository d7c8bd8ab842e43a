package io.quorumkv.storage.lsm.sstable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import org.jspecify.annotations.Nullable;

/**
 * An open, immutable table file (layout in {@code docs/formats/sstable.md}),
 * memory-mapped through one shared {@link Arena}; offsets are longs, so files over 2 GiB
 * work. Reads tables of every {@link TableFormat} version. The properties are decoded
 * once on open; the bloom filter and the index are copied into the table's arena, off the
 * Java heap, and their checksums verified over the copies, so the heap holds a handle per
 * table whatever its size (no array grows with its keys or blocks); a data block's CRC32C
 * is verified on every read (over the stored bytes: before a compressed block is
 * decompressed), then a block stored raw is read in place in the mapping and a compressed
 * one is copied out and decompressed ({@link BlockCodec}).
 *
 * <p>
 * Reference counted: the engine's state holds one reference, every reader pins the table
 * with {@link #tryRetain()} / {@link #release()}. When compaction drops the table it is
 * marked obsolete and its state reference released; the last release closes the arena
 * (unmapping deterministically) and deletes the file. A table whose count reached zero
 * can never be retained again.
 */
public final class SsTable {

	private static final ValueLayout.OfInt BIG_ENDIAN_INT = ValueLayout.JAVA_INT_UNALIGNED
		.withOrder(java.nio.ByteOrder.BIG_ENDIAN);

	private final FileIo io;

	private final Path path;

	private final long number;

	private final long fileSize;

	private final Arena arena;

	private final MemorySegment segment;

	private final TableProperties properties;

	private final BloomFilter bloom;

	private final BlockIndex index;

	private final int version;

	private final BlockCache cache;

	/** Whether a block of this table was ever put in the cache (to drop on release). */
	private volatile boolean cached;

	private final AtomicInteger refs = new AtomicInteger(1);

	private volatile boolean obsolete;

	private SsTable(FileIo io, Path path, long number, long fileSize, Arena arena, MemorySegment segment,
			TableProperties properties, BloomFilter bloom, BlockIndex index, int version, BlockCache cache) {
		this.io = io;
		this.cache = cache;
		this.version = version;
		this.path = path;
		this.number = number;
		this.fileSize = fileSize;
		this.arena = arena;
		this.segment = segment;
		this.properties = properties;
		this.bloom = bloom;
		this.index = index;
	}

	/**
	 * Maps and validates a table file, without a block cache; the caller owns the one
	 * initial reference.
	 */
	public static SsTable open(FileIo io, Path path, long number) throws IOException {
		return open(io, path, number, BlockCache.DISABLED);
	}

	/**
	 * Maps and validates a table file whose decompressed blocks go through {@code cache};
	 * the caller owns the one initial reference.
	 */
	public static SsTable open(FileIo io, Path path, long number, BlockCache cache) throws IOException {
		Arena arena = Arena.ofShared();
		try {
			MemorySegment segment = io.map(path, arena);
			long size = segment.byteSize();
			if (size < Footer.ENCODED_SIZE) {
				throw new CorruptedStorageException(path, 0, "SSTable", "file of " + size + " bytes has no footer");
			}
			Footer footer;
			try {
				footer = Footer.decode(copy(segment, size - Footer.ENCODED_SIZE, Footer.ENCODED_SIZE), size);
			}
			catch (IllegalArgumentException ex) {
				throw new CorruptedStorageException(path, size - Footer.ENCODED_SIZE, "SSTable footer",
						ex.getMessage());
			}
			int version = footer.version();
			TableProperties properties = TableProperties.decode(
					readMeta(path, segment, footer.properties(), "SSTable properties", version), version,
					footer.bloom().offset());
			BloomFilter bloom = BloomFilter
				.decode(copyMeta(path, segment, footer.bloom(), "SSTable bloom filter", version, arena));
			if (properties == null || bloom == null || properties.entryCount() != footer.entryCount()
					|| properties.maxTimestamp() != footer.maxTimestamp()) {
				throw new CorruptedStorageException(path, footer.properties().offset(), "SSTable meta blocks",
						"inconsistent properties or bloom filter");
			}
			BlockIndex index;
			try {
				index = BlockIndex.decode(copyMeta(path, segment, footer.index(), "SSTable index", version, arena),
						arena, version, footer.bloom().offset());
			}
			catch (IllegalArgumentException ex) {
				throw new CorruptedStorageException(path, footer.index().offset(), "SSTable index", ex.getMessage());
			}
			return new SsTable(io, path, number, size, arena, segment, properties, bloom, index, version, cache);
		}
		catch (IOException | RuntimeException ex) {
			arena.close();
			throw ex;
		}
	}

	private static byte[] copy(MemorySegment segment, long offset, int length) {
		byte[] out = new byte[length];
		MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, out, 0, length);
		return out;
	}

	/** A meta block (never compressed), checksum verified. */
	private static byte[] readMeta(Path path, MemorySegment segment, BlockHandle handle, String structure,
			int version) {
		Stored stored = readChecked(path, segment, handle, structure, version);
		if (stored.codec() != BlockCodec.NONE.id()) {
			throw new CorruptedStorageException(path, handle.offset(), structure,
					"meta block stored with codec " + stored.codec());
		}
		return stored.bytes().toArray(ValueLayout.JAVA_BYTE);
	}

	/**
	 * A meta block (never compressed) copied into {@code arena}, off the Java heap; the
	 * checksum is verified over the copy, so the bytes used are the bytes verified.
	 */
	private static MemorySegment copyMeta(Path path, MemorySegment segment, BlockHandle handle, String structure,
			int version, Arena arena) {
		if (handle.end(version) > segment.byteSize()) {
			throw new CorruptedStorageException(path, handle.offset(), structure, "block out of bounds");
		}
		MemorySegment copy = arena.allocate(Math.max(1, handle.size()), Long.BYTES)
			.asSlice(0, handle.size())
			.copyFrom(segment.asSlice(handle.offset(), handle.size()));
		long trailer = handle.offset() + handle.size();
		CRC32C crc = new CRC32C();
		crc.update(copy.asByteBuffer());
		if (version != TableFormat.VERSION_1) {
			int codec = Byte.toUnsignedInt(segment.get(ValueLayout.JAVA_BYTE, trailer));
			if (codec != BlockCodec.NONE.id()) {
				throw new CorruptedStorageException(path, handle.offset(), structure,
						"meta block stored with codec " + codec);
			}
			crc.update(codec);
			trailer++;
		}
		if ((int) crc.getValue() != segment.get(BIG_ENDIAN_INT, trailer)) {
			throw new CorruptedStorageException(path, handle.offset(), structure, "checksum mismatch");
		}
		return copy;
	}

	/**
	 * A block as stored (a slice of the mapping) and the id of its codec (always none in
	 * version 1).
	 */
	private record Stored(MemorySegment bytes, int codec) {
	}

	/**
	 * The stored bytes of a block, after checking its bounds and its checksum: in version
	 * 1 over the bytes, in version 2 over the bytes and the codec byte after them.
	 */
	private static Stored readChecked(Path path, MemorySegment segment, BlockHandle handle, String structure,
			int version) {
		if (handle.end(version) > segment.byteSize()) {
			throw new CorruptedStorageException(path, handle.offset(), structure, "block out of bounds");
		}
		MemorySegment contents = segment.asSlice(handle.offset(), handle.size());
		long trailer = handle.offset() + handle.size();
		CRC32C crc = new CRC32C();
		crc.update(contents.asByteBuffer());
		int codec = BlockCodec.NONE.id();
		if (version != TableFormat.VERSION_1) {
			codec = Byte.toUnsignedInt(segment.get(ValueLayout.JAVA_BYTE, trailer));
			crc.update(codec);
			trailer++;
		}
		int stored = segment.get(BIG_ENDIAN_INT, trailer);
		if ((int) crc.getValue() != stored) {
			throw new CorruptedStorageException(path, handle.offset(), structure, "checksum mismatch");
		}
		return new Stored(contents, codec);
	}

	public Path path() {
		return this.path;
	}

	public long number() {
		return this.number;
	}

	public long fileSize() {
		return this.fileSize;
	}

	public TableProperties properties() {
		return this.properties;
	}

	public byte[] minKey() {
		return this.properties.minKey();
	}

	public byte[] maxKey() {
		return this.properties.maxKey();
	}

	/** The table's {@link TableFormat} version. */
	public int formatVersion() {
		return this.version;
	}

	public long maxTimestamp() {
		return this.properties.maxTimestamp();
	}

	/**
	 * Whether the bloom filter lets {@code key} through; the caller pinned the table (the
	 * filter lives in the table's arena).
	 */
	public boolean mayContain(byte[] key) {
		return this.bloom.mayContain(key);
	}

	/** The entry of {@code key}, reading one data block; the caller pinned the table. */
	public @Nullable Entry find(byte[] key) {
		int i = blockIndexFor(key);
		return (i < this.index.count()) ? withBlock(i, true, (block) -> block.find(key)) : null;
	}

	/** The first block whose last key is {@code >= key}; the block count when none. */
	int blockIndexFor(byte[] key) {
		return this.index.find(key);
	}

	int blockCount() {
		return this.index.count();
	}

	/** Where data block {@code i} is stored; for tests that damage it. */
	BlockHandle blockHandle(int i) {
		return this.index.handle(i);
	}

	/**
	 * Applies {@code use} to data block {@code i}, which it must not keep: a block stored
	 * raw is read in place in the mapping (the caller keeps the table pinned); a
	 * compressed one is served from the block cache, pinned there while {@code use} runs,
	 * or else verified, decompressed and, when {@code fill}, put in the cache.
	 */
	<T> T withBlock(int i, boolean fill, Function<Block, T> use) {
		BlockHandle handle = this.index.handle(i);
		// The codec byte, unverified, only picks the way: the cache holds only blocks
		// that were verified, and a block not found there is verified below.
		boolean compressed = this.version != TableFormat.VERSION_1
				&& this.segment.get(ValueLayout.JAVA_BYTE, handle.offset() + handle.size()) != BlockCodec.NONE.id();
		if (compressed && this.cache.enabled()) {
			BlockCache.Cached hit = this.cache.acquire(this.number, handle.offset());
			if (hit != null) {
				try {
					return use.apply(Block.decode(hit.data(), this.version));
				}
				finally {
					hit.release();
				}
			}
		}
		Stored stored = readChecked(this.path, this.segment, handle, "SSTable data block", this.version);
		BlockCodec codec = BlockCodec.byId(stored.codec());
		if (codec == null) {
			throw new CorruptedStorageException(this.path, handle.offset(), "SSTable data block",
					"unknown codec " + stored.codec());
		}
		Block block;
		byte[] raw = null;
		try {
			if (codec == BlockCodec.NONE) {
				block = Block.decode(stored.bytes(), this.version);
			}
			else {
				raw = codec.decompress(stored.bytes().toArray(ValueLayout.JAVA_BYTE));
				block = Block.decode(MemorySegment.ofArray(raw), this.version);
			}
		}
		catch (Block.BlockFormatException ex) {
			throw new CorruptedStorageException(this.path, handle.offset(), "SSTable data block", ex.getMessage());
		}
		if (raw != null && fill && this.cache.enabled()) {
			this.cached = true;
			BlockCache.Cached put = this.cache.put(this.number, handle.offset(), raw);
			if (put != null) {
				// Decoded from the native copy, as a hit is: the block decoder then meets
				// two kinds of segment (native and mapped), not three, and its memory
				// accesses stay inlined.
				try {
					return use.apply(Block.decode(put.data(), this.version));
				}
				finally {
					put.release();
				}
			}
		}
		return use.apply(block);
	}

	/** Entries with a key {@code >= from}; the caller pinned the table. */
	public EntryIterator iterator(byte[] from) {
		return iterator(from, (key) -> true);
	}

	/**
	 * Entries with a key {@code >= from} that {@code keys} accepts, without reading the
	 * values of the others ({@code keys} is given a buffer it must not keep); the caller
	 * pinned the table.
	 */
	public EntryIterator iterator(byte[] from, Predicate<byte[]> keys) {
		return new SsTableIterator(this, from, keys);
	}

	/** Pins the table; false once it was released for good. */
	public boolean tryRetain() {
		int n;
		do {
			n = this.refs.get();
			if (n == 0) {
				return false;
			}
		}
		while (!this.refs.compareAndSet(n, n + 1));
		return true;
	}

	/** Unpins; the last release unmaps, and deletes the file of an obsolete table. */
	public void release() {
		int n = this.refs.decrementAndGet();
		if (n < 0) {
			throw new IllegalStateException("table " + this.path + " released too often");
		}
		if (n == 0) {
			if (this.cached) {
				long[] offsets = new long[this.index.count()];
				for (int i = 0; i < offsets.length; i++) {
					offsets[i] = this.index.handle(i).offset();
				}
				this.cache.invalidate(this.number, offsets);
			}
			this.arena.close();
			if (this.obsolete) {
				try {
					this.io.deleteIfExists(this.path);
					this.io.deleteIfExists(TableDigest.of(this.path));
				}
				catch (IOException ex) {
					System.getLogger(SsTable.class.getName())
						.log(System.Logger.Level.WARNING, "could not delete obsolete table " + this.path, ex);
				}
			}
		}
	}

	/** Marks the table dropped by compaction: its file goes with the last reference. */
	public void markObsolete() {
		this.obsolete = true;
	}

	@Override
	public String toString() {
		return "SsTable[" + this.path.getFileName() + ", " + this.fileSize + " bytes]";
	}

}
