package io.quorumkv.storage.lsm.sstable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import org.jspecify.annotations.Nullable;

/**
 * An open, immutable table file (layout in {@code docs/formats/sstable.md}),
 * memory-mapped through one shared {@link Arena}; offsets are longs, so files over 2 GiB
 * work. Reads tables of every {@link TableFormat} version. The index, bloom filter and
 * properties are decoded once on open; a data block's CRC32C is verified on every read
 * (over the stored bytes: before a compressed block is decompressed), then a block stored
 * raw is read in place in the mapping and a compressed one is copied out and decompressed
 * ({@link BlockCodec}).
 *
 * <p>
 * Reference counted: the engine's state holds one reference, every reader pins the table
 * with {@link #tryRetain()} / {@link #release()}. When compaction drops the table it is
 * marked obsolete and its state reference released; the last release closes the arena
 * (unmapping deterministically) and deletes the file. A table whose count reached zero
 * can never be retained again.
 */
public final class SsTable {

	private final FileIo io;

	private final Path path;

	private final long number;

	private final long fileSize;

	private final Arena arena;

	private final MemorySegment segment;

	private final TableProperties properties;

	private final BloomFilter bloom;

	private final byte[][] lastKeys;

	private final BlockHandle[] blocks;

	private final int version;

	private final AtomicInteger refs = new AtomicInteger(1);

	private volatile boolean obsolete;

	private SsTable(FileIo io, Path path, long number, long fileSize, Arena arena, MemorySegment segment,
			TableProperties properties, BloomFilter bloom, byte[][] lastKeys, BlockHandle[] blocks, int version) {
		this.io = io;
		this.version = version;
		this.path = path;
		this.number = number;
		this.fileSize = fileSize;
		this.arena = arena;
		this.segment = segment;
		this.properties = properties;
		this.bloom = bloom;
		this.lastKeys = lastKeys;
		this.blocks = blocks;
	}

	/** Maps and validates a table file; the caller owns the one initial reference. */
	public static SsTable open(FileIo io, Path path, long number) throws IOException {
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
				.decode(readMeta(path, segment, footer.bloom(), "SSTable bloom filter", version));
			if (properties == null || bloom == null || properties.entryCount() != footer.entryCount()
					|| properties.maxTimestamp() != footer.maxTimestamp()) {
				throw new CorruptedStorageException(path, footer.properties().offset(), "SSTable meta blocks",
						"inconsistent properties or bloom filter");
			}
			ByteBuffer index = ByteBuffer.wrap(readMeta(path, segment, footer.index(), "SSTable index", version));
			int count = index.getInt();
			if (count < 1 || count > index.remaining() / (4 + BlockHandle.ENCODED_SIZE)) {
				throw new CorruptedStorageException(path, footer.index().offset(), "SSTable index",
						"bad block count " + count);
			}
			byte[][] lastKeys = new byte[count][];
			BlockHandle[] blocks = new BlockHandle[count];
			for (int i = 0; i < count; i++) {
				int keyLength = index.remaining() >= 4 ? index.getInt() : -1;
				if (keyLength <= 0 || keyLength > index.remaining() - BlockHandle.ENCODED_SIZE) {
					throw new CorruptedStorageException(path, footer.index().offset(), "SSTable index",
							"bad key length in entry " + i);
				}
				lastKeys[i] = new byte[keyLength];
				index.get(lastKeys[i]);
				long[] raw = BlockHandle.read(index);
				if (raw[0] < 0 || raw[1] < 0
						|| raw[0] + raw[1] + TableFormat.trailerSize(version) > footer.bloom().offset()
						|| (i > 0 && Keys.compare(lastKeys[i - 1], lastKeys[i]) >= 0)) {
					throw new CorruptedStorageException(path, footer.index().offset(), "SSTable index",
							"entry " + i + " out of bounds or out of order");
				}
				blocks[i] = new BlockHandle(raw[0], (int) raw[1]);
			}
			return new SsTable(io, path, number, size, arena, segment, properties, bloom, lastKeys, blocks, version);
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
		int stored = segment.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), trailer);
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

	public boolean mayContain(byte[] key) {
		return this.bloom.mayContain(key);
	}

	/** The entry of {@code key}, reading one data block; the caller pinned the table. */
	public @Nullable Entry find(byte[] key) {
		int i = blockIndexFor(key);
		return (i < this.blocks.length) ? readBlock(i).find(key) : null;
	}

	/** The first block whose last key is {@code >= key}; the block count when none. */
	int blockIndexFor(byte[] key) {
		int lo = 0;
		int hi = this.lastKeys.length;
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			if (Keys.compare(this.lastKeys[mid], key) < 0) {
				lo = mid + 1;
			}
			else {
				hi = mid;
			}
		}
		return lo;
	}

	int blockCount() {
		return this.blocks.length;
	}

	/** Where data block {@code i} is stored; for tests that damage it. */
	BlockHandle blockHandle(int i) {
		return this.blocks[i];
	}

	/**
	 * Data block {@code i}: read in place in the mapping when it is stored raw (the
	 * caller keeps the table pinned while it uses the block), decompressed into an array
	 * otherwise.
	 */
	Block readBlock(int i) {
		BlockHandle handle = this.blocks[i];
		Stored stored = readChecked(this.path, this.segment, handle, "SSTable data block", this.version);
		BlockCodec codec = BlockCodec.byId(stored.codec());
		if (codec == null) {
			throw new CorruptedStorageException(this.path, handle.offset(), "SSTable data block",
					"unknown codec " + stored.codec());
		}
		try {
			MemorySegment raw = (codec == BlockCodec.NONE) ? stored.bytes()
					: MemorySegment.ofArray(codec.decompress(stored.bytes().toArray(ValueLayout.JAVA_BYTE)));
			return Block.decode(raw, this.version);
		}
		catch (Block.BlockFormatException ex) {
			throw new CorruptedStorageException(this.path, handle.offset(), "SSTable data block", ex.getMessage());
		}
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
			this.arena.close();
			if (this.obsolete) {
				try {
					this.io.deleteIfExists(this.path);
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
