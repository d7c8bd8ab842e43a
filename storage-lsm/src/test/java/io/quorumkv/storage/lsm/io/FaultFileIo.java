package io.quorumkv.storage.lsm.io;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

/**
 * A fault-injecting file layer for one data folder, as RocksDB's
 * {@code FaultInjectionTestFS}: real files, plus a model of what the disk would keep if
 * the power went now.
 *
 * <ul>
 * <li><b>Data</b>: each file's synced length is what {@link AppendFile#sync()} (or a
 * {@link #truncate}, which forces) covered; bytes past it are in the "page cache"
 * only.</li>
 * <li><b>Names</b>: creations, hard links, renames and deletions since the last
 * {@link #syncDirectory} of their folder are a log; a folder's durable names are those of
 * its last sync, and a power loss keeps a random prefix of the log (a journaling file
 * system commits metadata in order). Files deleted or replaced since are kept aside (in a
 * {@code .trash} folder the engine ignores) until then, so that an image can bring them
 * back. The folder's {@code backups/} (an LSM's incremental backups) is modelled the same
 * way and its files are in the image.</li>
 * <li><b>Power loss</b> ({@link #powerLoss}, or a {@link Fault} that fires): the layer
 * goes dead (every later operation fails), and a crash image of the folder is written to
 * another folder: the durable names, each file cut to its synced length plus, per
 * {@link Tear}, a torn part of the unsynced rest. Recovery is then tested on the
 * image.</li>
 * <li><b>Faults</b> ({@link #inject}): {@code write}, {@code fsync}, {@code rename}, ...
 * fail at the N-th call or with a probability, a write may land partly;
 * {@link #flipReads} flips one bit of a read with a probability.</li>
 * <li><b>A failed {@code fsync}</b> does what Linux does (PostgreSQL's "fsyncgate",
 * 2018): the file's unsynced bytes are lost (their dirty pages dropped after the
 * writeback error), yet the next {@code fsync} of the file succeeds. Reads still see them
 * (the page cache), but every crash image holds zeros in their place, also once a later
 * {@code fsync} covered the file's length. An engine that retries the {@code fsync} and
 * takes its success for durability loses what it acknowledged.</li>
 * </ul>
 *
 * No {@code fsync} is really issued: durability is modelled, not obtained. Every
 * operation runs under one lock, so an image is a consistent cut.
 */
public final class FaultFileIo implements FileIo {

	/** The operations faults can target. */
	public enum Op {

		CREATE, WRITE, SYNC, RENAME, LINK, DELETE, SYNC_DIRECTORY, READ, TRUNCATE

	}

	/** What a power loss keeps of each file's unsynced bytes. */
	public enum Tear {

		/** Nothing: each file is cut at its synced length. */
		DROP_UNSYNCED,
		/** A random prefix of the unsynced bytes: the last write torn at any byte. */
		TORN_PREFIX,
		/** A random prefix, then zeros (blocks allocated, never written). */
		TORN_PREFIX_THEN_ZEROS,
		/**
		 * Everything written, and every name: what a process crash leaves (the kernel
		 * keeps its page cache).
		 */
		KEEP_WRITTEN

	}

	/**
	 * What an image kept, for the test's report; taken at {@code atNanos}
	 * ({@link System#nanoTime}).
	 */
	public record Image(Path folder, int files, long unsyncedBytesDropped, int nameChangesLost, long atNanos) {
	}

	/** A byte flipped in what a read returned. */
	public record Flip(Path file, long offset) {
	}

	/** A fault that fired: the operation it failed, on which file, on which thread. */
	public record Fired(Op op, Path file, String thread) {
	}

	private final FaultDisk disk;

	private final SplittableRandom random;

	private final ReentrantLock lock = new ReentrantLock();

	private final List<Fault> faults = new CopyOnWriteArrayList<>();

	private final Map<Op, AtomicLong> calls = new EnumMap<>(Op.class);

	private final AtomicLong injected = new AtomicLong();

	private final List<Flip> flips = new CopyOnWriteArrayList<>();

	private final List<Fired> fired = new CopyOnWriteArrayList<>();

	private volatile double flipProbability;

	private volatile BiConsumer<Op, Path> hook = (op, path) -> {
	};

	private volatile @Nullable Image image;

	/**
	 * Takes over {@code dir} (created if missing); files already there count as durable.
	 */
	public FaultFileIo(Path dir, long seed) {
		this(dir, seed, false);
	}

	/**
	 * A layer over every file below {@code dir}, at any depth (a node's storage path: its
	 * data folder, its snapshots), with folders renamed whole.
	 */
	public static FaultFileIo tree(Path dir, long seed) {
		return new FaultFileIo(dir, seed, true);
	}

	private FaultFileIo(Path dir, long seed, boolean tree) {
		this.random = new SplittableRandom(seed);
		for (Op op : Op.values()) {
			this.calls.put(op, new AtomicLong());
		}
		try {
			this.disk = new FaultDisk(dir, tree);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Adds a fault. */
	public FaultFileIo inject(Fault fault) {
		this.faults.add(fault);
		return this;
	}

	/** Flips one bit of each read (a file read whole or mapped) with this probability. */
	public FaultFileIo flipReads(double probability) {
		this.flipProbability = probability;
		return this;
	}

	/**
	 * Runs before every operation, outside the layer's lock: a test can count, or hold an
	 * operation up (bounded waits only).
	 */
	public FaultFileIo onEachOperation(BiConsumer<Op, Path> hook) {
		this.hook = hook;
		return this;
	}

	/**
	 * Holds every creation of a table's temporary file (a flush or a compaction about to
	 * write) until {@code release} opens, at most 20 s: keeps memtables frozen.
	 */
	public FaultFileIo holdingTableWrites(CountDownLatch release) {
		return onEachOperation((op, path) -> {
			if (op == Op.CREATE && path.getFileName().toString().endsWith(".sst.tmp")) {
				try {
					release.await(20, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		});
	}

	/** The folder this layer tracks. */
	public Path dir() {
		return this.disk.dir;
	}

	public long calls(Op op) {
		return this.calls.get(op).get();
	}

	/** Faults that fired, power losses included. */
	public long injected() {
		return this.injected.get();
	}

	public List<Flip> flips() {
		return List.copyOf(this.flips);
	}

	/**
	 * The faults that fired, in order: a test that must know more than the engine's first
	 * failure (which later fault lost what) reads them here.
	 */
	public List<Fired> fired() {
		return List.copyOf(this.fired);
	}

	/** The image a power loss left, or null while the power is on. */
	public @Nullable Image image() {
		return this.image;
	}

	public boolean isDead() {
		return this.image != null;
	}

	/**
	 * Cuts the power now: writes the crash image to {@code target} (a new folder) and
	 * fails every later operation.
	 */
	public Image powerLoss(Tear tear, Path target) {
		this.lock.lock();
		try {
			checkAlive();
			return cut(tear, target);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		finally {
			this.lock.unlock();
		}
	}

	// ---- FileIo

	@Override
	public AppendFile createNew(Path path) throws IOException {
		return create(path, true);
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return create(path, false);
	}

	private AppendFile create(Path path, boolean mustBeNew) throws IOException {
		String name = begin(Op.CREATE, path);
		try {
			if (mustBeNew && Files.exists(path)) {
				throw new FileAlreadyExistsException(path.toString());
			}
			FaultDisk.Node node = this.disk.create(name, path);
			return new FaultFile(node, new FileOutputStream(path.toFile(), true));
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public byte[] readAll(Path path) throws IOException {
		begin(Op.READ, path);
		try {
			byte[] bytes = Files.readAllBytes(path);
			maybeFlip(path, bytes.length, (offset) -> bytes[(int) (offset >>> 3)] ^= (byte) (1 << (offset & 7)));
			return bytes;
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public MemorySegment map(Path path, Arena arena) throws IOException {
		begin(Op.READ, path);
		try {
			if (this.flipProbability == 0) {
				return FileIo.real().map(path, arena);
			}
			byte[] bytes = Files.readAllBytes(path);
			MemorySegment copy = arena.allocate(Math.max(1, bytes.length)).asSlice(0, bytes.length);
			MemorySegment.copy(bytes, 0, copy, ValueLayout.JAVA_BYTE, 0, bytes.length);
			maybeFlip(path, bytes.length, (offset) -> {
				long at = offset >>> 3;
				copy.set(ValueLayout.JAVA_BYTE, at, (byte) (copy.get(ValueLayout.JAVA_BYTE, at) ^ (1 << (offset & 7))));
			});
			return copy.asReadOnly();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void truncate(Path path, long length) throws IOException {
		String name = begin(Op.TRUNCATE, path);
		try {
			try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
				channel.truncate(length);
			}
			FaultDisk.Node node = (name != null) ? this.disk.node(name) : null;
			if (node != null) {
				node.truncate(length);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void rename(Path from, Path to) throws IOException {
		String name = begin(Op.RENAME, to);
		try {
			String source = this.disk.tracked(from);
			if (source != null && name != null && Files.isDirectory(from)) {
				this.disk.renameFolder(source, name, from, to);
				return;
			}
			if (source == null || name == null || this.disk.node(source) == null) {
				throw new IOException("rename outside the tracked folder or of an unknown file: " + from + " -> " + to);
			}
			this.disk.rename(source, name, from, to);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void link(Path existing, Path link) throws IOException {
		String name = begin(Op.LINK, link);
		try {
			String source = this.disk.tracked(existing);
			if (source != null && name != null && this.disk.node(source) == null) {
				throw new NoSuchFileException(existing.toString());
			}
			if (source == null || name == null) {
				throw new IOException("link outside the tracked folder: " + existing + " -> " + link);
			}
			if (this.disk.node(name) != null) {
				throw new FileAlreadyExistsException(link.toString());
			}
			this.disk.link(source, name, existing, link);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void createDirectories(Path folder) throws IOException {
		begin(null, folder);
		try {
			// Folders are not modelled: an image has the folders of its files.
			Files.createDirectories(folder);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public boolean deleteIfExists(Path path) throws IOException {
		String name = begin(Op.DELETE, path);
		try {
			if (name == null) {
				return Files.deleteIfExists(path);
			}
			return this.disk.delete(name);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void syncDirectory(Path folder) throws IOException {
		begin(Op.SYNC_DIRECTORY, folder);
		try {
			String name = this.disk.folderName(folder);
			if (name != null) {
				this.disk.syncFolder(name);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public List<Path> list(Path folder) throws IOException {
		begin(null, folder);
		try {
			return FileIo.real().list(folder);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public boolean exists(Path path) {
		return Files.exists(path);
	}

	// ---- the model

	/**
	 * Runs the hook, takes the lock, fails if dead, counts the call and applies the
	 * faults that fire (a power loss for an operation other than a write happens here,
	 * before it). Returns the file's name in the tracked folder, or null outside it. The
	 * caller unlocks.
	 */
	private @Nullable String begin(@Nullable Op op, Path path) throws IOException {
		if (op != null) {
			this.hook.accept(op, path);
		}
		this.lock.lock();
		try {
			checkAlive();
			if (op != null) {
				this.calls.get(op).incrementAndGet();
				Fault fault = firing(op, path);
				if (fault != null && op != Op.WRITE) {
					act(fault, op, path);
				}
			}
			return this.disk.tracked(path);
		}
		catch (IOException | RuntimeException ex) {
			this.lock.unlock();
			throw ex;
		}
	}

	private @Nullable Fault firing(Op op, Path path) {
		String name = path.getFileName().toString();
		Fault fired = null;
		for (Fault fault : this.faults) {
			// Every fault counts its matches, also when an earlier one fires.
			if (fault.fires(op, name, this.random) && fired == null) {
				fired = fault;
			}
		}
		if (fired != null) {
			this.injected.incrementAndGet();
			this.fired.add(new Fired(op, path, Thread.currentThread().getName()));
		}
		return fired;
	}

	/**
	 * Carries out a fault that fired (not a write's: see {@link FaultFile#write}); a
	 * failed {@code fsync} drops the file's unsynced bytes.
	 */
	private void act(Fault fault, Op op, Path path) throws IOException {
		if (fault.action == Fault.Action.POWER_LOSS) {
			cut(fault.tear, fault.image);
			throw new IOException("power lost (injected) at " + op + " of " + path);
		}
		if (op == Op.SYNC) {
			String name = this.disk.tracked(path);
			FaultDisk.Node node = (name != null) ? this.disk.node(name) : null;
			if (node != null) {
				node.dropUnsynced();
			}
			throw new IOException("injected SYNC failure on " + path + ": its unsynced bytes are lost");
		}
		throw new IOException("injected " + op + " failure on " + path);
	}

	private void checkAlive() throws IOException {
		if (this.image != null) {
			throw new IOException("power lost (injected): the disk is gone");
		}
	}

	private void maybeFlip(Path path, long length, java.util.function.LongConsumer flip) {
		if (length > 0 && this.flipProbability > 0 && this.random.nextDouble() < this.flipProbability) {
			long bit = (long) (this.random.nextDouble() * length * 8);
			flip.accept(bit);
			this.injected.incrementAndGet();
			this.flips.add(new Flip(path, bit >>> 3));
		}
	}

	/** Goes dead and writes the crash image; under the lock. */
	private Image cut(Tear tear, Path target) throws IOException {
		Image result = this.disk.cut(tear, target, this.random);
		this.image = result;
		return result;
	}

	/** A file being written; every call goes through the layer's lock and faults. */
	private final class FaultFile implements AppendFile {

		private final FaultDisk.Node node;

		private final FileOutputStream out;

		FaultFile(FaultDisk.Node node, FileOutputStream out) {
			this.node = node;
			this.out = out;
		}

		@Override
		public void write(byte[] bytes, int offset, int length) throws IOException {
			FaultFileIo io = FaultFileIo.this;
			io.hook.accept(Op.WRITE, this.node.location);
			io.lock.lock();
			try {
				io.checkAlive();
				io.calls.get(Op.WRITE).incrementAndGet();
				Fault fault = io.firing(Op.WRITE, this.node.location);
				if (fault != null && fault.action == Fault.Action.FAIL) {
					throw new IOException("injected write failure on " + this.node.location);
				}
				if (fault != null && fault.action == Fault.Action.FAIL_PARTIALLY) {
					int part = io.random.nextInt(length + 1);
					append(bytes, offset, part);
					throw new IOException("injected write failure on " + this.node.location + " after " + part + " of "
							+ length + " bytes");
				}
				append(bytes, offset, length);
				if (fault != null) {
					io.cut(fault.tear, fault.image);
					throw new IOException("power lost (injected) at a write of " + this.node.location);
				}
			}
			finally {
				io.lock.unlock();
			}
		}

		private void append(byte[] bytes, int offset, int length) throws IOException {
			this.out.write(bytes, offset, length);
			this.node.length += length;
		}

		@Override
		public void sync() throws IOException {
			FaultFileIo io = FaultFileIo.this;
			io.begin(Op.SYNC, this.node.location);
			try {
				this.node.synced = this.node.length;
			}
			finally {
				io.lock.unlock();
			}
		}

		@Override
		public void close() throws IOException {
			this.out.close();
		}

	}

}
