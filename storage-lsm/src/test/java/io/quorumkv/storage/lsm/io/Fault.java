package io.quorumkv.storage.lsm.io;

import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * One fault of a {@link FaultFileIo}: which operations on which files it matches, when it
 * fires (at the N-th match, from the N-th on, or with a probability) and what it does.
 *
 * <pre>{@code
 * io.inject(Fault.at(Op.SYNC, "wal-.*", 3).fail());              // the 3rd WAL fsync fails
 * io.inject(Fault.at(Op.WRITE, ".*\\.sst\\.tmp", 1).powerLoss(Tear.TORN_PREFIX, image));
 * io.inject(Fault.randomly(Op.RENAME, ".*", 0.01).fail());
 * }</pre>
 */
public final class Fault {

	/** What a fault does when it fires. */
	public enum Action {

		/** The operation fails with an {@code IOException} and has no effect. */
		FAIL,
		/**
		 * A write writes a random prefix of its bytes (possibly none), then fails: a full
		 * disk in the middle of a record.
		 */
		FAIL_PARTIALLY,
		/**
		 * The power goes: a write lands first (unsynced, so a tear may keep part of it),
		 * any other operation does not happen; a crash image is taken and every later
		 * operation fails.
		 */
		POWER_LOSS

	}

	/** The operation matched; null for any. */
	final FaultFileIo.@Nullable Op op;

	private final Pattern fileName;

	/** Operations made on threads whose name starts with this are not matched. */
	private @Nullable String skipThreads;

	private final long nth;

	private final boolean onward;

	private final double probability;

	private final AtomicLong matches = new AtomicLong();

	Action action = Action.FAIL;

	FaultFileIo.@Nullable Tear tear;

	@Nullable Path image;

	private Fault(FaultFileIo.@Nullable Op op, String fileName, long nth, boolean onward, double probability) {
		this.op = op;
		this.fileName = Pattern.compile(fileName);
		this.nth = nth;
		this.onward = onward;
		this.probability = probability;
	}

	/** Fires at the {@code nth} (1-based) operation {@code op} on a matching file. */
	public static Fault at(FaultFileIo.Op op, String fileNameRegex, long nth) {
		return new Fault(op, fileNameRegex, nth, false, 0);
	}

	/**
	 * Fires at the {@code nth} (1-based) file operation of any kind on any file: a crash
	 * point of a sweep that tries every one in turn.
	 */
	public static Fault atOperation(long nth) {
		return new Fault(null, ".*", nth, false, 0);
	}

	/**
	 * Neither matches nor counts the operations made on threads whose name starts with
	 * {@code prefix} (a timer's, whose place in the order varies from run to run).
	 */
	public Fault skippingThreads(String prefix) {
		this.skipThreads = prefix;
		return this;
	}

	/**
	 * Fires at the {@code nth} matching operation and every one after it (a dead disk).
	 */
	public static Fault from(FaultFileIo.Op op, String fileNameRegex, long nth) {
		return new Fault(op, fileNameRegex, nth, true, 0);
	}

	/** Fires at each matching operation with {@code probability}. */
	public static Fault randomly(FaultFileIo.Op op, String fileNameRegex, double probability) {
		return new Fault(op, fileNameRegex, 0, false, probability);
	}

	public Fault fail() {
		this.action = Action.FAIL;
		return this;
	}

	/** Only for {@link FaultFileIo.Op#WRITE}. */
	public Fault failPartially() {
		this.action = Action.FAIL_PARTIALLY;
		return this;
	}

	/** Cuts the power, leaving a crash image in {@code target}. */
	public Fault powerLoss(FaultFileIo.Tear tear, Path target) {
		this.action = Action.POWER_LOSS;
		this.tear = tear;
		this.image = target;
		return this;
	}

	/** Whether the fault fires now; called under the file layer's lock. */
	boolean fires(FaultFileIo.Op op, String name, SplittableRandom random) {
		if ((this.op != null && op != this.op) || !this.fileName.matcher(name).matches()) {
			return false;
		}
		if (this.skipThreads != null && Thread.currentThread().getName().startsWith(this.skipThreads)) {
			return false;
		}
		long n = this.matches.incrementAndGet();
		if (this.nth > 0) {
			return this.onward ? n >= this.nth : n == this.nth;
		}
		return random.nextDouble() < this.probability;
	}

	@Override
	public String toString() {
		return this.action + " on " + ((this.op != null) ? this.op : "any operation") + " of " + this.fileName
				+ ((this.nth > 0) ? " at match " + this.nth + (this.onward ? " onward" : "")
						: " p=" + this.probability);
	}

}
