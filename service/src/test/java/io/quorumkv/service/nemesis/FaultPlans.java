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
		Deque<Kind> round = new ArrayDeque<>();
		return () -> {
			if (round.isEmpty()) {
				List<Kind> shuffled = new ArrayList<>(kinds);
				Collections.shuffle(shuffled, random);
				round.addAll(shuffled);
			}
			return draw(round.poll(), random, size);
		};
	}

	static Fault draw(Kind kind, Random random, int size) {
		int node = random.nextInt(size);
		int other = (node + 1 + random.nextInt(size - 1)) % size;
		return switch (kind) {
			case KILL -> new Fault.Kill(node);
			case PAUSE -> new Fault.Pause(node, 1_000 + random.nextInt(14_001));
			case PARTITION -> {
				Set<Integer> rest = new HashSet<>();
				for (int i = 0; i < size; i++) {
					if (i != node) {
						rest.add(i);
					}
				}
				yield new Fault.Partition(List.of(Set.of(node), Set.copyOf(rest)));
			}
			case BRIDGE -> {
				int third = 3 - node - other;
				yield new Fault.Bridge(node, (size == 3) ? third : other, other);
			}
			case ONE_WAY -> new Fault.OneWay(node, other);
			case CLOCK -> new Fault.ClockSkew(node, (random.nextBoolean() ? 1 : -1) * (200 + random.nextInt(4_801)));
			case DISK_FULL -> new Fault.DiskFull(node);
			case OLD_COPY -> new Fault.OldCopy(node);
		};
	}

}
