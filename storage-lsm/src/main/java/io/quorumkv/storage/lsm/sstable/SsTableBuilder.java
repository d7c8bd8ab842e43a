package io.quorumkv.storage.lsm.sstable;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;

/**
 * Writes one table file: data blocks, then the bloom filter, the index and the properties
 * blocks (each followed by its CRC32C), then the {@link Footer}. It writes to
 * {@code <name>.tmp}, forces it, renames it atomically to its final name and forces the
 * folder, so a table file either exists complete and durable or not at all.
 */
public final class SsTableBuilder implements AutoCloseable {

	private final Path target;

	private final Path temp;

	private final FileChannel channel;

	private final OutputStream out;

	private final int blockSize;

	private final int bloomBitsPerKey;

	private final BlockBuilder block = new BlockBuilder();

	private final java.io.ByteArrayOutputStream index = new java.io.ByteArrayOutputStream();

	private long[] hashes = new long[1024];

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

	private SsTableBuilder(Path target, long number, int blockSize, int bloomBitsPerKey) throws IOException {
		this.target = target;
		this.number = number;
		this.temp = target.resolveSibling(target.getFileName() + ".tmp");
		this.channel = FileChannel.open(this.temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
				StandardOpenOption.WRITE);
		this.out = new BufferedOutputStream(Channels.newOutputStream(this.channel), 1 << 16);
		this.blockSize = blockSize;
		this.bloomBitsPerKey = bloomBitsPerKey;
	}

	public static SsTableBuilder create(Path target, long number, int blockSize, int bloomBitsPerKey)
			throws IOException {
		return new SsTableBuilder(target, number, blockSize, bloomBitsPerKey);
	}

	/** Finishes the file and opens it (the caller owns the table's one reference). */
	public SsTable finishAndOpen() throws IOException {
		finish();
		return SsTable.open(this.target, this.number);
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
		if (this.count == this.hashes.length) {
			this.hashes = Arrays.copyOf(this.hashes, this.hashes.length * 2);
		}
		this.hashes[(int) this.count++] = BloomFilter.hash(key);
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
		BlockHandle handle = writeBlock(this.block.finish());
		java.nio.ByteBuffer entry = java.nio.ByteBuffer.allocate(4 + last.length + BlockHandle.ENCODED_SIZE);
		entry.putInt(last.length).put(last);
		handle.write(entry);
		this.index.write(entry.array(), 0, entry.capacity());
		this.blocks++;
	}

	private BlockHandle writeBlock(byte[] contents) throws IOException {
		CRC32C crc = new CRC32C();
		crc.update(contents);
		BlockHandle handle = new BlockHandle(this.position, contents.length);
		this.out.write(contents);
		int c = (int) crc.getValue();
		this.out.write(new byte[] { (byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8), (byte) c });
		this.position += contents.length + 4;
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
		BloomFilter bloom = BloomFilter.create(this.count, this.bloomBitsPerKey);
		for (int i = 0; i < this.count; i++) {
			bloom.addHash(this.hashes[i]);
		}
		BlockHandle bloomHandle = writeBlock(bloom.encode());
		byte[] indexBytes = this.index.toByteArray();
		byte[] indexBlock = java.nio.ByteBuffer.allocate(4 + indexBytes.length)
			.putInt(this.blocks)
			.put(indexBytes)
			.array();
		BlockHandle indexHandle = writeBlock(indexBlock);
		TableProperties properties = new TableProperties(this.minKey, this.lastKey, this.count, this.tombstones,
				this.minTimestamp, this.maxTimestamp);
		BlockHandle propertiesHandle = writeBlock(properties.encode());
		this.out.write(new Footer(indexHandle, bloomHandle, propertiesHandle, this.count, this.maxTimestamp).encode());
		this.position += Footer.ENCODED_SIZE;
		this.out.flush();
		this.channel.force(true);
		this.channel.close();
		Files.move(this.temp, this.target, StandardCopyOption.ATOMIC_MOVE);
		syncDirectory(this.target.getParent());
		this.done = true;
		return this.position;
	}

	/** Forces a folder's entries (a rename or a delete) to the disk. */
	public static void syncDirectory(Path dir) throws IOException {
		try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
			channel.force(true);
		}
	}

	/** Abandons an unfinished table: closes and deletes the temporary file. */
	@Override
	public void close() throws IOException {
		if (!this.done) {
			this.done = true;
			this.channel.close();
			Files.deleteIfExists(this.temp);
		}
	}

}
