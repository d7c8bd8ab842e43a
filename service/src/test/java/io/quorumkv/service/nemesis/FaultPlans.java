package io.quorumkv.service.nemesis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/** Where the {@link Nemesis}'s faults come from. */
final class FaultPlans {

	enum Kind {

		KILL, PAUSE, PARTITION, BRIDGE, ONE_WAY, CLOCK, DISK_FULL, OLD_COPY

	}

	private FaultPlans() {
	}

	/** These faults, in order, then done. */
	static Supplier<@Nullable Fault> of(List<Fault> faults) {
		Deque<Fault> queue = new ArrayDeque<>(faults);
		return queue::poll;
	}

	/**
	 * Faults of these kinds, drawn without end from a seeded random (the kinds in turn,
	 * shuffled each round, so that every kind comes up as often).
	 */
	static Supplier<@Nullable Fault> random(Random random, int size, List<Kind> kinds) {
		return random(random, IntStream.range(0, size).boxed().toList(), kinds);
	}

	/** The same among these nodes (at least two; a bridge takes three). */
	static Supplier<@Nullable Fault> random(Random random, List<Integer> nodes, List<Kind> kinds) {
		Deque<Kind> round = new ArrayDeque<>();
		return () -> {
			if (round.isEmpty()) {
				List<Kind> shuffled = new ArrayList<>(kinds);
				Collections.shuffle(shuffled, random);
				round.addAll(shuffled);
			}
			return draw(round.poll(), random, nodes);
		};
	}

	/**
	 * Membership changes under cycling faults, without end, in rounds: the spare joins
	 * (via a member drawn), then a member drawn is decommissioned (via another) and comes
	 * back as the next spare (wiped, a newcomer), then a member drawn repairs; after each
	 * change, {@code faultsPerChange} faults of these kinds drawn among the nodes it
	 * involves, then the ring settles; a fault drawn lands in the middle of the repair.
	 */
	static Supplier<@Nullable Fault> membership(Random random, NemesisNodes nodes, Operator operator, List<Kind> kinds,
			int faultsPerChange, long settleMillis) {
		Deque<Fault> queue = new ArrayDeque<>();
		Deque<Kind> round = new ArrayDeque<>();
		int[] step = { 0 };
		Supplier<Kind> kind = () -> {
			if (round.isEmpty()) {
				List<Kind> shuffled = new ArrayList<>(kinds);
				Collections.shuffle(shuffled, random);
				round.addAll(shuffled);
			}
			return round.poll();
		};
		return () -> {
			if (queue.isEmpty()) {
				List<Integer> members = nodes.members();
				int coordinator = members.get(random.nextInt(members.size()));
				switch (step[0]++ % 3) {
					case 0 -> {
						int spare = nodes.spare();
						List<Integer> involved = new ArrayList<>(members);
						involved.add(spare);
						queue.add(new Fault.Join(operator, spare, coordinator));
						for (int i = 0; i < faultsPerChange; i++) {
							queue.add(draw(kind.get(), random, involved));
						}
						queue.add(new Fault.Settle(operator, settleMillis));
					}
					case 1 -> {
						int leaving = members.get(random.nextInt(members.size()));
						int via = members
							.get((members.indexOf(leaving) + 1 + random.nextInt(members.size() - 1)) % members.size());
						queue.add(new Fault.Decommission(operator, leaving, via));
						for (int i = 0; i < faultsPerChange; i++) {
							queue.add(draw(kind.get(), random, members));
						}
						queue.add(new Fault.Settle(operator, settleMillis));
						queue.add(new Fault.Respawn(leaving));
					}
					default -> queue.add(new Fault.Together(List.of(new Fault.Repair(operator, coordinator),
							new Fault.Delayed(1_000, draw(kind.get(), random, members)))));
				}
			}
			return queue.poll();
		};
	}

	/** A fault of this kind among these nodes (at least two; a bridge takes three). */
	static Fault draw(Kind kind, Random random, List<Integer> nodes) {
		int size = nodes.size();
		int index = random.nextInt(size);
		int node = nodes.get(index);
		int otherIndex = (index + 1 + random.nextInt(size - 1)) % size;
		int other = nodes.get(otherIndex);
		return switch (kind) {
			case KILL -> new Fault.Kill(node);
			case PAUSE -> new Fault.Pause(node, 1_000 + random.nextInt(14_001));
			case PARTITION -> {
				Set<Integer> rest = new HashSet<>(nodes);
				rest.remove(node);
				yield new Fault.Partition(List.of(Set.of(node), Set.copyOf(rest)));
			}
			case BRIDGE -> {
				// Any node of the others reaches both sides.
				int bridge = (size == 3) ? nodes.get(3 - index - otherIndex)
						: nodes.stream().filter((n) -> n != node && n != other).findFirst().orElse(other);
				yield new Fault.Bridge(node, bridge, other);
			}
			case ONE_WAY -> new Fault.OneWay(node, other);
			case CLOCK -> new Fault.ClockSkew(node, (random.nextBoolean() ? 1 : -1) * (200 + random.nextInt(4_801)));
			case DISK_FULL -> new Fault.DiskFull(node);
			case OLD_COPY -> new Fault.OldCopy(node);
		};
	}

}
