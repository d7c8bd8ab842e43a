package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * What narrows {@link LinearizabilitySearch}'s work on a key without changing its
 * verdict: unanswered operations are the costly ones (each may take effect at any later
 * point or never, doubling the orders to try), so those that cannot matter are left out
 * and those that must take effect by a known time are given it.
 */
final class LinearizabilityNarrowing {

	private LinearizabilityNarrowing() {
	}

	/**
	 * One key's operations without the unanswered writes nothing saw: a write of a value
	 * no answered read returned, with a known version no read, 412 or condition named.
	 * Each unanswered operation doubles the orders the search may have to try, and such a
	 * write changes no verdict: in a linearization where it took effect, no read returned
	 * its value and no condition depended on its version, so until the next write nothing
	 * can have seen it (a failed condition would have named it as current), and dropping
	 * it leaves a linearization; "never took effect" is one of its outcomes anyway. When
	 * some 412 of the key did not record the current version, nothing is dropped (that
	 * failure might need such a write).
	 */
	static List<LinearizabilityOp> withoutUnseenWrites(List<LinearizabilityOp> ops) {
		Set<String> valuesRead = new HashSet<>();
		Set<Long> versionsNamed = new HashSet<>();
		for (LinearizabilityOp op : ops) {
			switch (op.input()) {
				case RegisterModel.PutIfVersion put -> versionsNamed.add(put.expected());
				case RegisterModel.DeleteIfVersion delete -> versionsNamed.add(delete.expected());
				default -> {
				}
			}
			switch (op.output()) {
				case RegisterModel.Observed seen -> {
					if (seen.value() != null) {
						valuesRead.add(seen.value());
					}
					versionsNamed.add(seen.version());
				}
				case RegisterModel.Condition condition when !condition.held() -> {
					if (condition.current() == RegisterModel.UNKNOWN) {
						return ops;
					}
					versionsNamed.add(condition.current());
				}
				case null, default -> {
				}
			}
		}
		List<LinearizabilityOp> kept = new ArrayList<>(ops.size());
		for (LinearizabilityOp op : ops) {
			boolean unseen = !op.answered() && switch (op.input()) {
				case RegisterModel.Write write -> unseen(write.value(), write.version(), valuesRead, versionsNamed);
				case RegisterModel.PutIfVersion put -> unseen(put.value(), put.version(), valuesRead, versionsNamed);
				case RegisterModel.PutIfAbsent put -> unseen(put.value(), put.version(), valuesRead, versionsNamed);
				default -> false;
			};
			if (!unseen) {
				kept.add(op);
			}
		}
		return kept;
	}

	/**
	 * Per operation, the time by which it must have taken effect if at all: its answer's,
	 * and for an unanswered write the earliest answer of a read that returned its value
	 * when it is the only write of that value (no one else can have made the read see
	 * it). The search can then give up on placing it past that point, where it would
	 * otherwise try it at every later one.
	 */
	static long[] deadlines(List<LinearizabilityOp> ops) {
		Map<String, Integer> writers = new HashMap<>();
		Map<String, Long> firstRead = new HashMap<>();
		for (LinearizabilityOp op : ops) {
			String value = writtenValue(op);
			if (value != null) {
				writers.merge(value, 1, Integer::sum);
			}
			if (op.output() instanceof RegisterModel.Observed seen && seen.value() != null) {
				firstRead.merge(seen.value(), op.ret(), Math::min);
			}
		}
		long[] deadlines = new long[ops.size()];
		for (int i = 0; i < ops.size(); i++) {
			LinearizabilityOp op = ops.get(i);
			String value = writtenValue(op);
			deadlines[i] = (!op.answered() && value != null && writers.get(value) == 1 && firstRead.containsKey(value))
					? firstRead.get(value) : op.ret();
		}
		return deadlines;
	}

	private static @Nullable String writtenValue(LinearizabilityOp op) {
		return switch (op.input()) {
			case RegisterModel.Write write -> write.value();
			case RegisterModel.PutIfVersion put -> put.value();
			case RegisterModel.PutIfAbsent put -> put.value();
			default -> null;
		};
	}

	private static boolean unseen(String value, long version, Set<String> valuesRead, Set<Long> versionsNamed) {
		return version != RegisterModel.UNKNOWN && !valuesRead.contains(value) && !versionsNamed.contains(version);
	}

}
