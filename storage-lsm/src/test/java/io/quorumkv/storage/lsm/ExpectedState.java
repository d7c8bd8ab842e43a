package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The stress run's expected state, as db_stress's: per key, the version last acknowledged
 * and the version of a write in flight, in a memory-mapped file that survives a kill -9
 * of the writing process (its stores are in the page cache the moment they are made). A
 * version is {@code timestamp << 1 | tombstone}, 0 for a key never written; its value
 * follows from key and timestamp ({@link #entry}), so a read can be checked byte for
 * byte.
 *
 * <p>
 * Protocol per write: {@link #begin} the version, upsert, {@link #commit} it. After a
 * crash a key must hold its committed version, or its pending one when a write was in
 * flight; {@link #settle} then records what it holds.
 */
final class ExpectedState implements AutoCloseable {

	private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

	private static final int[] VALUE_LENGTHS = { 0, 8, 24, 100, 300 };

	private final FileChannel channel;

	private final MappedByteBuffer slots;

	private final int keys;

	ExpectedState(Path file, int keys) throws IOException {
		this.keys = keys;
		this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
				StandardOpenOption.WRITE);
		this.slots = this.channel.map(FileChannel.MapMode.READ_WRITE, 0, 16L * keys);
	}

	int keys() {
		return this.keys;
	}

	static byte[] key(int k) {
		return String.format("stress-%06d", k).getBytes(StandardCharsets.UTF_8);
	}

	static int keyNumber(byte[] key) {
		return Integer.parseInt(new String(key, StandardCharsets.UTF_8).substring(7));
	}

	static long version(long timestamp, boolean tombstone) {
		return (timestamp << 1) | (tombstone ? 1 : 0);
	}

	static long versionOf(@Nullable Entry e) {
		return (e == null) ? 0 : version(e.timestamp(), e.isTombstone());
	}

	static long timestamp(long version) {
		return version >>> 1;
	}

	/** The entry of key {@code k} at {@code version}: the value follows from both. */
	static Entry entry(int k, long version) {
		long ts = timestamp(version);
		if ((version & 1) == 1) {
			return Entry.tombstone(key(k), ts);
		}
		SplittableRandom random = new SplittableRandom(k * 0x9E3779B97F4A7C15L ^ ts);
		byte[] value = new byte[VALUE_LENGTHS[random.nextInt(VALUE_LENGTHS.length)]];
		random.nextBytes(value);
		return Entry.value(key(k), value, ts);
	}

	/** Whether {@code e} is exactly what a writer sends for its key and version. */
	static boolean wellFormed(Entry e) {
		return e.equals(entry(keyNumber(e.key()), versionOf(e)));
	}

	long committed(int k) {
		return (long) LONGS.getVolatile(this.slots, 16 * k);
	}

	long pending(int k) {
		return (long) LONGS.getVolatile(this.slots, 16 * k + 8);
	}

	/**
	 * The newest version that may be in the store now. The pending version is read first:
	 * {@link #commit} sets the committed one before it clears the pending one, so a
	 * commit between the two reads is always seen in one of them (read the other way
	 * round, the old committed version and the cleared pending one made a version a
	 * reader had just found in the store look newer than anything written).
	 */
	long newest(int k) {
		long pending = pending(k);
		return Math.max(committed(k), pending);
	}

	void begin(int k, long version) {
		LONGS.setVolatile(this.slots, 16 * k + 8, version);
	}

	void commit(int k, long version) {
		LONGS.setVolatile(this.slots, 16 * k, version);
		LONGS.setVolatile(this.slots, 16 * k + 8, 0L);
	}

	/**
	 * Checks a key read after a restart: its committed version, or the pending one.
	 * @return whether it was acceptable; then the found version becomes the committed
	 */
	boolean settle(int k, @Nullable Entry found) {
		long version = versionOf(found);
		boolean ok = (found == null || wellFormed(found))
				&& (version == committed(k) || (pending(k) != 0 && version == pending(k)));
		if (ok) {
			commit(k, version);
		}
		return ok;
	}

	@Override
	public void close() throws IOException {
		this.slots.force();
		this.channel.close();
	}

}
