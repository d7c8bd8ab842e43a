package io.quorumkv.storage.lsm.sstable;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * Writes one table file in the {@link TableFormat#CURRENT current} format: data blocks
 * (compressed by the table's {@link BlockCodec} where that saves an eighth or more), then
 * the bloom filter, the index and the properties blocks (each followed by its trailer:
 * codec byte and CRC32C), then the {@link Footer}. It writes to {@code <name>.tmp},
 * forces it, writes and forces its {@link TableDigest} (the CRC32C of every byte written,
 * kept as they are written), renames the table atomically to its final name and forces
 * the folder, so a table file either exists complete and durable, its digest beside it,
 * or not at all.
 */
public final class SsTableBuilder implements AutoCloseable {

	private final FileIo io;

	private final Path target;

	private final Path temp;

	private final Path digest;

	private final AppendFile file;

	private final FileStream stream;

	private final OutputStream out;

	private final int blockSize;

	private final int bloomBitsPerKey;

	private final BlockCodec codec;

	private long rawDataBytes;

	private long storedDataBytes;

	private final BlockBuilder block = new BlockBuilder();

	/** The index's entries, in chunks ({@link MetaBuffer}: no humongous array). */
	private final MetaBuffer index = new MetaBuffer();

	/** The keys' hashes for the filter, {@value #HASHES_PER_CHUNK} to a chunk (64 KB). */
	private final List<long[]> hashes = new ArrayList<>();

	private static final int HASHES_PER_CHUNK = MetaBuffer.CHUNK / Long.BYTES;

	/** Copies a native segment's bytes to the file, a piece at a time. */
	private byte @Nullable [] scratch;

	private long position;

	private long count;

	private int blocks;

	private long tombstones;

	private long minTimestamp = Long.MAX_VALUE;

	private long maxTimestamp = Long.MIN_VALUE;

	private byte[] minKey = new byte[0];

	private byte[] lastKey = new byte[0];

	private boolean done;

	private final long number;

	private SsTableBuilder(FileIo io, Path target, long number, int blockSize, int bloomBitsPerKey, BlockCodec codec)
			throws IOException {
		this.codec = codec;
		this.io = io;
		this.target = target;
		this.number = number;
		this.temp = target.resolveSibling(target.getFileName() + ".tmp");
		this.digest = TableDigest.of(target);
		this.file = io.createOrTruncate(this.temp);
		this.stream = new FileStream(this.file);
		this.out = new BufferedOutputStream(this.stream, 1 << 16);
		this.blockSize = blockSize;
		this.bloomBitsPerKey = bloomBitsPerKey;
	}

	/** A builder of an uncompressed table. */
	public static SsTableBuilder create(FileIo io, Path target, long number, int blockSize, int bloomBitsPerKey)
			throws IOException {
		return create(io, target, number, blockSize, bloomBitsPerKey, BlockCodec.NONE);
	}

	/** A builder whose data blocks are compressed with {@code codec}. */
	public static SsTableBuilder create(FileIo io, Path target, long number, int blockSize, int bloomBitsPerKey,
			BlockCodec codec) throws IOException {
		return new SsTableBuilder(io, target, number, blockSize, bloomBitsPerKey, codec);
	}

	/** Finishes the file and opens it (the caller owns the table's one reference). */
	public SsTable finishAndOpen() throws IOException {
		return finishAndOpen(BlockCache.DISABLED);
	}

	/**
	 * Finishes the file and opens it with {@code cache} (the caller owns the table's one
	 * reference).
	 */
	public SsTable finishAndOpen(BlockCache cache) throws IOException {
		finish();
		return SsTable.open(this.io, this.target, this.number, cache);
	}

	/** Adds the next entry; keys must be strictly ascending. */
	public void add(Entry entry) throws IOException {
		byte[] key = entry.key();
		if (this.count > 0 && Keys.compare(key, this.lastKey) <= 0) {
			throw new IllegalArgumentException("keys must be strictly ascending");
		}
		if (this.count == 0) {
			this.minKey = key;
		}
		int slot = (int) (this.count % HASHES_PER_CHUNK);
		if (slot == 0) {
			this.hashes.add(new long[HASHES_PER_CHUNK]);
		}
		this.hashes.get(this.hashes.size() - 1)[slot] = BloomFilter.hash(key);
		this.count++;
		this.tombstones += entry.isTombstone() ? 1 : 0;
		this.minTimestamp = Math.min(this.minTimestamp, entry.timestamp());
		this.maxTimestamp = Math.max(this.maxTimestamp, entry.timestamp());
		this.lastKey = key;
		this.block.add(entry);
		if (this.block.estimatedSize() >= this.blockSize) {
			flushBlock();
		}
	}

	public Path target() {
		return this.target;
	}

	public long count() {
		return this.count;
	}

	/** Bytes written so far plus the open block. */
	public long estimatedSize() {
		return this.position + this.block.estimatedSize();
	}

	private void flushBlock() throws IOException {
		byte[] last = this.block.lastKey();
		byte[] raw = this.block.finish();
		byte[] compressed = this.codec.compress(raw);
		BlockHandle handle = (compressed != null) ? writeBlock(compressed, this.codec)
				: writeBlock(raw, BlockCodec.NONE);
		this.rawDataBytes += raw.length;
		this.storedDataBytes += handle.size();
		java.nio.ByteBuffer entry = java.nio.ByteBuffer.allocate(4 + last.length + BlockHandle.ENCODED_SIZE);
		entry.putInt(last.length).put(last);
		handle.write(entry);
		this.index.write(entry.array(), 0, entry.capacity());
		this.blocks++;
	}

	/** Writes a block and its trailer: the codec's id, then the CRC32C of both. */
	private BlockHandle writeBlock(byte[] contents, BlockCodec storedWith) throws IOException {
		CRC32C crc = new CRC32C();
		crc.update(contents);
		this.out.write(contents);
		return trailer(crc, contents.length, storedWith);
	}

	/** Writes a block held in native memory (the filter), in pieces, and its trailer. */
	private BlockHandle writeBlock(MemorySegment contents) throws IOException {
		CRC32C crc = new CRC32C();
		crc.update(contents.asByteBuffer());
		byte[] piece = (this.scratch != null) ? this.scratch : (this.scratch = new byte[MetaBuffer.CHUNK]);
		for (long at = 0; at < contents.byteSize(); at += piece.length) {
			int length = (int) Math.min(piece.length, contents.byteSize() - at);
			MemorySegment.copy(contents, ValueLayout.JAVA_BYTE, at, piece, 0, length);
			this.out.write(piece, 0, length);
		}
		return trailer(crc, Math.toIntExact(contents.byteSize()), BlockCodec.NONE);
	}

	/** Writes the index block: the count of blocks, then the gathered entries. */
	private BlockHandle writeIndexBlock() throws IOException {
		byte[] count = java.nio.ByteBuffer.allocate(4).putInt(this.blocks).array();
		CRC32C crc = new CRC32C();
		crc.update(count);
		this.index.checksum(crc);
		this.out.write(count);
		this.index.writeTo(this.out);
		return trailer(crc, Math.toIntExact(count.length + this.index.size()), BlockCodec.NONE);
	}

	/** Ends a block of {@code size} bytes whose checksum {@code crc} holds so far. */
	private BlockHandle trailer(CRC32C crc, int size, BlockCodec storedWith) throws IOException {
		crc.update(storedWith.id());
		BlockHandle handle = new BlockHandle(this.position, size);
		int c = (int) crc.getValue();
		this.out.write(new byte[] { (byte) storedWith.id(), (byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8),
				(byte) c });
		this.position += size + TableFormat.trailerSize(TableFormat.CURRENT);
		return handle;
	}

	/**
	 * Completes, forces and publishes the file.
	 * @return its size in bytes
	 */
	public long finish() throws IOException {
		if (this.count == 0) {
			throw new IllegalStateException("a table holds at least one entry");
		}
		if (!this.block.isEmpty()) {
			flushBlock();
		}
		BlockHandle bloomHandle;
		try (Arena filterMemory = Arena.ofConfined()) {
			BloomFilter bloom = BloomFilter.create(this.count, this.bloomBitsPerKey, filterMemory);
			long added = 0;
			for (long[] chunk : this.hashes) {
				for (int i = 0; i < chunk.length && added < this.count; i++, added++) {
					bloom.addHash(chunk[i]);
				}
			}
			bloomHandle = writeBlock(bloom.encoded());
		}
		this.hashes.clear();
		BlockHandle indexHandle = writeIndexBlock();
		TableProperties properties = new TableProperties(this.minKey, this.lastKey, this.count, this.tombstones,
				this.minTimestamp, this.maxTimestamp, this.codec.id(), this.rawDataBytes, this.storedDataBytes);
		BlockHandle propertiesHandle = writeBlock(properties.encode(), BlockCodec.NONE);
		this.out.write(new Footer(indexHandle, bloomHandle, propertiesHandle, this.count, this.maxTimestamp).encode());
		this.position += Footer.ENCODED_SIZE;
		this.out.flush();
		this.file.sync();
		this.file.close();
		new TableDigest(this.stream.written, this.stream.crc.getValue()).write(this.io, this.digest);
		this.io.rename(this.temp, this.target);
		this.io.syncDirectory(this.target.getParent());
		this.done = true;
		return this.position;
	}

	/**
	 * Abandons an unfinished table: closes and deletes the temporary file and the digest,
	 * if written.
	 */
	@Override
	public void close() throws IOException {
		if (!this.done) {
			this.done = true;
			try {
				this.file.close();
			}
			finally {
				try {
					this.io.deleteIfExists(this.temp);
				}
				finally {
					this.io.deleteIfExists(this.digest);
				}
			}
		}
	}

	/**
	 * The builder's buffered stream writes into its file, and keeps the CRC32C and count
	 * of every byte it writes (the table's {@link TableDigest}).
	 */
	private static final class FileStream extends OutputStream {

		private final AppendFile file;

		final CRC32C crc = new CRC32C();

		long written;

		FileStream(AppendFile file) {
			this.file = file;
		}

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] bytes, int offset, int length) throws IOException {
			this.file.write(bytes, offset, length);
			this.crc.update(bytes, offset, length);
			this.written += length;
		}

	}

}
