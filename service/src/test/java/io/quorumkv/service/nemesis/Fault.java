package io.quorumkv.service.nemesis;

import java.util.List;
import java.util.Set;

/**
 * One fault the {@link Nemesis} injects: {@link #start} breaks something, {@link #stop}
 * heals it. The first word of {@link #describe} names its kind (the checker counts
 * answers per kind).
 */
sealed interface Fault {

	String describe();

	void start(NemesisNodes nodes);

	void stop(NemesisNodes nodes);

	/** How long the fault lasts, given the nemesis's default. */
	default long holdMillis(long defaultMillis) {
		return defaultMillis;
	}

	/**
	 * SIGKILL, then a restart when healed. The killed node's data folder is copied aside
	 * first: the older copy that {@link OldCopy} restores.
	 */
	record Kill(int node) implements Fault {

		@Override
		public String describe() {
			return "kill n" + this.node;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.kill(this.node);
			nodes.snapshot(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.start(this.node);
		}

	}

	/** SIGSTOP for a while, then SIGCONT. */
	record Pause(int node, long millis) implements Fault {

		@Override
		public String describe() {
			return "pause n" + this.node + " " + this.millis + " ms";
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.pause(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.resume(this.node);
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return this.millis;
		}

	}

	/**
	 * Sides that cannot reach each other (majority and minority, a node cut off); a
	 * bridge is two partitions that share a node ({@link Bridge}).
	 */
	record Partition(List<Set<Integer>> sides) implements Fault {

		@Override
		public String describe() {
			return "partition " + this.sides;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.network().partition(this.sides);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.network().heal();
		}

	}

	/**
	 * Two nodes that cannot reach each other, while a third (the bridge) reaches both.
	 */
	record Bridge(int left, int bridge, int right) implements Fault {

		@Override
		public String describe() {
			return "bridge n" + this.left + " x n" + this.right + " via n" + this.bridge;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.network().partition(List.of(Set.of(this.left), Set.of(this.right)));
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.network().heal();
		}

	}

	/**
	 * {@code from}'s requests do not reach {@code to}; {@code to}'s reach {@code from}.
	 */
	record OneWay(int from, int to) implements Fault {

		@Override
		public String describe() {
			return "one-way n" + this.from + " -/-> n" + this.to;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.network().cutOneWay(this.from, this.to);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.network().heal();
		}

	}

	/** The node's wall clock jumps by an offset, and back when healed (libfaketime). */
	record ClockSkew(int node, long millis) implements Fault {

		@Override
		public String describe() {
			return "clock n" + this.node + " " + ((this.millis >= 0) ? "+" : "") + this.millis + " ms";
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.setClockOffset(this.node, this.millis);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.setClockOffset(this.node, 0);
		}

	}

	/** Faults at the same time: started in order, healed in reverse order. */
	record Together(List<Fault> faults) implements Fault {

		@Override
		public String describe() {
			StringBuilder kinds = new StringBuilder();
			StringBuilder details = new StringBuilder();
			for (Fault fault : this.faults) {
				String[] parts = fault.describe().split(" ", 2);
				kinds.append((kinds.length() > 0) ? "+" : "").append(parts[0]);
				details.append((details.length() > 0) ? ", " : "").append(fault.describe());
			}
			return kinds + " (" + details + ")";
		}

		@Override
		public void start(NemesisNodes nodes) {
			this.faults.forEach((fault) -> fault.start(nodes));
		}

		@Override
		public void stop(NemesisNodes nodes) {
			for (int i = this.faults.size() - 1; i >= 0; i--) {
				this.faults.get(i).stop(nodes);
			}
		}

	}

	/**
	 * A fault that starts a while after the others of a {@link Together} (in the middle
	 * of a repair, say).
	 */
	record Delayed(long millis, Fault fault) implements Fault {

		@Override
		public String describe() {
			return this.fault.describe() + " after " + this.millis + " ms";
		}

		@Override
		public void start(NemesisNodes nodes) {
			io.quorumkv.service.nemesis.Pause.millis(this.millis);
			this.fault.start(nodes);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			this.fault.stop(nodes);
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return this.fault.holdMillis(defaultMillis);
		}

	}

	/**
	 * SIGKILL, and a restart with the node's wall clock set back (or forward) by an
	 * offset; healed by putting the clock right while it runs.
	 */
	record ClockRestart(int node, long millis) implements Fault {

		@Override
		public String describe() {
			return "clock-restart n" + this.node + " " + ((this.millis >= 0) ? "+" : "") + this.millis + " ms";
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.kill(this.node);
			nodes.setClockOffset(this.node, this.millis);
			nodes.start(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.setClockOffset(this.node, 0);
		}

	}

	/**
	 * The node's disk fills up; when healed, space returns and the node is restarted (the
	 * LSM's write failure is sticky until a restart, docs/reliability.md).
	 */
	record DiskFull(int node) implements Fault {

		@Override
		public String describe() {
			return "disk-full n" + this.node;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.fillDisk(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.freeDisk(this.node);
			nodes.kill(this.node);
			nodes.start(this.node);
		}

	}

	/**
	 * SIGKILL and a restart from the older copy of the node's data folder that the last
	 * {@link Kill} of it left (its copy is taken now when there is none yet).
	 */
	record OldCopy(int node) implements Fault {

		@Override
		public String describe() {
			return "old-copy n" + this.node;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.kill(this.node);
			if (nodes.hasSnapshot(this.node)) {
				nodes.restoreSnapshot(this.node);
			}
			else {
				nodes.snapshot(this.node);
			}
		}

		@Override
		public void stop(NemesisNodes nodes) {
			nodes.start(this.node);
		}

	}

	/**
	 * The operator asks {@code coordinator} to join the spare {@code node} (a step of a
	 * membership scenario, not a fault: the faults after it land while it streams).
	 */
	record Join(Operator operator, int node, int coordinator) implements Fault {

		@Override
		public String describe() {
			return "join n" + this.node + " via n" + this.coordinator;
		}

		@Override
		public void start(NemesisNodes nodes) {
			this.operator.join(this.node, this.coordinator);
		}

		@Override
		public void stop(NemesisNodes nodes) {
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return 0;
		}

	}

	/** The operator asks {@code coordinator} to decommission {@code node}. */
	record Decommission(Operator operator, int node, int coordinator) implements Fault {

		@Override
		public String describe() {
			return "decommission n" + this.node + " via n" + this.coordinator;
		}

		@Override
		public void start(NemesisNodes nodes) {
			this.operator.decommission(this.node, this.coordinator);
		}

		@Override
		public void stop(NemesisNodes nodes) {
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return 0;
		}

	}

	/**
	 * Everything healed, the operator waits for the ring to settle (asking again for a
	 * change refused under a fault); fails the nemesis when it does not within the limit.
	 */
	record Settle(Operator operator, long limitMillis) implements Fault {

		@Override
		public String describe() {
			return "settle within " + this.limitMillis + " ms";
		}

		@Override
		public void start(NemesisNodes nodes) {
			NemesisRun.healAll(nodes);
			this.operator.settle(java.time.Duration.ofMillis(this.limitMillis));
		}

		@Override
		public void stop(NemesisNodes nodes) {
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return 0;
		}

	}

	/**
	 * A decommissioned node comes back as the next spare: data folder wiped, started as a
	 * newcomer.
	 */
	record Respawn(int node) implements Fault {

		@Override
		public String describe() {
			return "respawn n" + this.node;
		}

		@Override
		public void start(NemesisNodes nodes) {
			nodes.respawn(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
		}

		@Override
		public long holdMillis(long defaultMillis) {
			return 0;
		}

	}

	/**
	 * The operator asks {@code node} to repair every key it owns; healed when its answer
	 * has come (bounded). Together with faults that start after it, they land mid-repair.
	 */
	record Repair(Operator operator, int node) implements Fault {

		@Override
		public String describe() {
			return "repair by n" + this.node;
		}

		@Override
		public void start(NemesisNodes nodes) {
			this.operator.startRepair(this.node);
		}

		@Override
		public void stop(NemesisNodes nodes) {
			this.operator.awaitRepair(java.time.Duration.ofMinutes(3));
		}

	}

}
