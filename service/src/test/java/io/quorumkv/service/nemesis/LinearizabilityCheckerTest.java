package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import io.quorumkv.service.nemesis.RegisterModel.Condition;
import io.quorumkv.service.nemesis.RegisterModel.Delete;
import io.quorumkv.service.nemesis.RegisterModel.DeleteIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Done;
import io.quorumkv.service.nemesis.RegisterModel.Input;
import io.quorumkv.service.nemesis.RegisterModel.Observed;
import io.quorumkv.service.nemesis.RegisterModel.Output;
import io.quorumkv.service.nemesis.RegisterModel.PutIfAbsent;
import io.quorumkv.service.nemesis.RegisterModel.PutIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Read;
import io.quorumkv.service.nemesis.RegisterModel.Write;

/**
 * {@link LinearizabilityChecker} on histories written by hand: each is linearizable or
 * not for one stated reason. Times are small numbers of one clock; versions are small
 * numbers too (the store's are timestamps; only their identity matters here).
 */
class LinearizabilityCheckerTest {

	private static final long U = RegisterModel.UNKNOWN;

	private final List<LinearizabilityOp> history = new ArrayList<>();

	@Test
	void sequentialOperationsOfEveryKindAreLinearizable() {
		op(1, "k", new Read(), absent(), 0, 1);
		op(1, "k", new PutIfAbsent("a", 1), held(), 2, 3);
		op(1, "k", new PutIfAbsent("b", 2), failed(1), 4, 5);
		op(1, "k", new PutIfVersion("c", 1, 3), held(), 6, 7);
		op(1, "k", new PutIfVersion("d", 1, 4), failed(3), 8, 9);
		op(1, "k", new Read(), seen("c", 3), 10, 11);
		op(1, "k", new DeleteIfVersion(1), failed(3), 12, 13);
		op(1, "k", new DeleteIfVersion(3), held(), 14, 15);
		op(1, "k", new PutIfVersion("e", 3, 5), failed(RegisterModel.ABSENT), 16, 17);
		op(1, "k", new Write("f", 6), new Done(), 18, 19);
		op(1, "k", new Delete(), new Done(), 20, 21);
		op(1, "k", new Read(), absent(), 22, 23);
		assertLinearizable();
	}

	@Test
	void overlappingOperationsMayTakeEffectInAnyOrderTheirTimesAllow() {
		// b is written inside a's window, and a lands last: both reads are explained
		op(1, "k", new Write("a", 1), new Done(), 0, 10);
		op(2, "k", new Write("b", 2), new Done(), 5, 20);
		op(3, "k", new Read(), seen("b", 2), 6, 8);
		op(3, "k", new Read(), seen("a", 1), 12, 14);
		op(3, "k", new Read(), seen("a", 1), 25, 26);
		// two overlapping CAS from one version: one held, the other saw its result
		op(1, "j", new PutIfAbsent("x", 10), held(), 0, 1);
		op(1, "j", new PutIfVersion("y", 10, 11), held(), 10, 20);
		op(2, "j", new PutIfVersion("z", 10, 12), failed(11), 5, 15);
		op(3, "j", new Read(), seen("y", 11), 21, 22);
		assertLinearizable();
	}

	@Test
	void aStaleReadIsCaughtWithTheReadAsTheOperationThatCannotBePlaced() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(1, "k", new Write("b", 2), new Done(), 2, 3);
		LinearizabilityOp stale = op(2, "k", new Read(), seen("a", 1), 4, 5);
		LinearizabilityResult.Violation violation = assertViolation("k");
		assertThat(violation.unplaced()).isEqualTo(stale);
		assertThat(violation.prefix()).extracting(LinearizabilityOp::id).containsExactly(0L, 1L);
		assertThat(violation.states()).containsExactly(new RegisterModel.State("b", 2));
		assertThat(violation.explain()).contains("key k is not linearizable", "#2 c2 k Read[]");
	}

	@Test
	void aLostUpdateIsCaught() {
		// the second CAS names the version the first replaced, yet holds
		op(1, "k", new PutIfAbsent("0", 1), held(), 0, 1);
		op(1, "k", new PutIfVersion("1", 1, 2), held(), 2, 3);
		op(2, "k", new PutIfVersion("1'", 1, 3), held(), 4, 5);
		assertViolation("k");
	}

	@Test
	void twoConcurrentCasFromOneVersionBothHoldingIsCaught() {
		op(1, "k", new PutIfAbsent("0", 1), held(), 0, 1);
		op(1, "k", new PutIfVersion("1", 1, 2), held(), 10, 20);
		op(2, "k", new PutIfVersion("1'", 1, 3), held(), 11, 21);
		assertViolation("k");
	}

	@Test
	void aFailedConditionThatHeldIsCaught() {
		op(1, "k", new PutIfAbsent("a", 1), held(), 0, 1);
		op(2, "k", new PutIfVersion("b", 1, 2), failed(1), 2, 3);
		assertViolation("k");
	}

	@Test
	void aCreateOverAnExistingValueIsCaught() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(2, "k", new PutIfAbsent("b", 2), held(), 2, 3);
		assertViolation("k");
	}

	@Test
	void aConditionalDeleteOnAnotherVersionThatHeldIsCaught() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(1, "k", new Write("b", 2), new Done(), 2, 3);
		op(2, "k", new DeleteIfVersion(1), held(), 4, 5);
		assertViolation("k");
	}

	@Test
	void anUnansweredWriteMayTakeEffectLateOrNever() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(2, "k", new Write("b", 2), null, 2, 3);
		op(3, "k", new Read(), seen("a", 1), 10, 11);
		op(3, "k", new Read(), seen("b", 2), 20, 21);
		op(1, "j", new Write("a", 3), new Done(), 0, 1);
		op(2, "j", new PutIfVersion("b", 3, 4), null, 2, 3);
		op(3, "j", new Read(), seen("a", 3), 30, 31);
		assertLinearizable();
	}

	@Test
	void anUnansweredWriteCannotTakeEffectTwiceOrBeforeItsCall() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(2, "k", new Write("b", 2), null, 2, 3);
		op(3, "k", new Read(), seen("b", 2), 10, 11);
		op(3, "k", new Read(), seen("a", 1), 20, 21);
		assertViolation("k");
		this.history.clear();
		op(3, "j", new Read(), seen("b", 2), 0, 1);
		op(2, "j", new Write("b", 2), null, 2, 3);
		assertViolation("j");
	}

	@Test
	void anUnansweredConditionalWriteWhoseConditionNeverHeldCannotTakeEffect() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(2, "k", new PutIfVersion("b", 9, 2), null, 2, 3);
		op(3, "k", new Read(), seen("b", 2), 10, 11);
		assertViolation("k");
	}

	@Test
	void aVersionTheWriterDidNotLearnIsLearntFromWhatRevealsIt() {
		op(1, "k", new Write("a", U), new Done(), 0, 1);
		op(2, "k", new Read(), seen("a", 7), 2, 3);
		op(2, "k", new PutIfVersion("b", 7, 8), held(), 4, 5);
		op(1, "j", new Write("a", U), new Done(), 0, 1);
		op(2, "j", new PutIfVersion("b", 7, 8), failed(5), 2, 3);
		op(3, "j", new Read(), seen("a", 5), 4, 5);
		assertLinearizable();
		this.history.clear();
		op(1, "k", new Write("a", U), new Done(), 0, 1);
		op(2, "k", new Read(), seen("a", 7), 2, 3);
		op(2, "k", new PutIfVersion("b", 6, 8), held(), 4, 5);
		assertViolation("k");
		this.history.clear();
		op(1, "j", new Write("a", U), new Done(), 0, 1);
		op(2, "j", new PutIfVersion("b", 7, 8), failed(5), 2, 3);
		op(3, "j", new Read(), seen("a", 6), 4, 5);
		assertViolation("j");
	}

	@Test
	void unansweredWritesNothingSawDoNotHideAViolationBehindTheBudget() {
		op(1, "k", new Write("a", 1), new Done(), 0, 1);
		op(1, "k", new Write("b", 2), new Done(), 2, 3);
		for (int i = 0; i < 40; i++) {
			// 2^40 subsets of them may have taken effect: no budget explores them all
			op(2 + i, "k", new Write("lost" + i, 100 + i), null, 4 + i, 5 + i);
		}
		op(1, "k", new Read(), seen("a", 1), 100, 101);
		LinearizabilityResult result = new LinearizabilityChecker(new LinearizabilityChecker.Budget(100_000, 100_000))
			.check(this.history);
		assertThat(result).as("%s", result).isInstanceOf(LinearizabilityResult.Violation.class);
		// one that a read saw is kept, and explains that read
		this.history.removeLast();
		op(1, "k", new Read(), seen("lost7", 107), 100, 101);
		assertLinearizable();
		// as is every one when a 412 did not record the current version
		op(3, "k", new PutIfVersion("c", 1, 200), failed(U), 110, 111);
		assertThat(LinearizabilityNarrowing.withoutUnseenWrites(this.history)).hasSize(this.history.size());
	}

	@Test
	void keysAreCheckedApartAndTheBrokenOneIsNamed() {
		op(1, "fine", new Write("a", 1), new Done(), 0, 1);
		op(1, "broken", new Write("a", 2), new Done(), 0, 1);
		op(1, "broken", new Write("b", 3), new Done(), 2, 3);
		op(2, "fine", new Read(), seen("a", 1), 4, 5);
		op(2, "broken", new Read(), seen("a", 2), 4, 5);
		assertViolation("broken");
	}

	@Test
	void aSpentBudgetIsUnknownNeverLinearizable() {
		this.history.addAll(LinearizabilityHistories.generate(1, 400, 6, 1, 0.0));
		LinearizabilityResult result = new LinearizabilityChecker(new LinearizabilityChecker.Budget(50, 1_000))
			.check(this.history);
		assertThat(result).isInstanceOf(LinearizabilityResult.Unknown.class);
		assertThat(((LinearizabilityResult.Unknown) result).reason()).contains("budget spent");
		assertThat(new LinearizabilityChecker(new LinearizabilityChecker.Budget(1_000_000, 10)).check(this.history))
			.isInstanceOf(LinearizabilityResult.Unknown.class);
		assertLinearizable();
	}

	private void assertLinearizable() {
		LinearizabilityResult result = new LinearizabilityChecker(LinearizabilityChecker.Budget.DEFAULT)
			.check(this.history);
		assertThat(result).as("%s", result).isInstanceOf(LinearizabilityResult.Linearizable.class);
	}

	private LinearizabilityResult.Violation assertViolation(String key) {
		LinearizabilityResult result = new LinearizabilityChecker(LinearizabilityChecker.Budget.DEFAULT)
			.check(this.history);
		assertThat(result).as("%s", result).isInstanceOf(LinearizabilityResult.Violation.class);
		LinearizabilityResult.Violation violation = (LinearizabilityResult.Violation) result;
		assertThat(violation.key()).isEqualTo(key);
		return violation;
	}

	private LinearizabilityOp op(int client, String key, Input input, @Nullable Output output, long call, long ret) {
		LinearizabilityOp op = new LinearizabilityOp(this.history.size(), client, key, input, output, call, ret);
		this.history.add(op);
		return op;
	}

	private static Observed seen(String value, long version) {
		return new Observed(value, version);
	}

	private static Observed absent() {
		return new Observed(null, RegisterModel.ABSENT);
	}

	private static Condition held() {
		return new Condition(true, U);
	}

	private static Condition failed(long current) {
		return new Condition(false, current);
	}

}
