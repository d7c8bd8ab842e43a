package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The checker on synthetic histories: each anomaly class is found where it is, and not
 * where it is not. Times are in milliseconds for readability (the checker compares only).
 */
class CheckerTest {

	private final List<Op> ops = new ArrayList<>();

	private final List<Op> finals = new ArrayList<>();

	private final List<History.Window> windows = new ArrayList<>();

	@Test
	void aCleanHistoryIsClean() {
		put("k", "a", 2, 0, 10, 201);
		get("k", "a", 2, 20, 30, 200);
		delete("k", 2, 40, 50, 202);
		get("k", null, 2, 60, 70, 404);
		put("k", "b", 1, 80, 90, 201);
		get("k", "b", 3, 100, 110, 200);
		finalRead("k", "b");
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
		assertThat(report.operations()).isEqualTo(6);
		assertThat(report.acknowledgedWrites()).isEqualTo(3);
		assertThat(report.okReads()).isEqualTo(3);
		assertThat(report.finalReads()).isEqualTo(1);
	}

	@Test
	void anAcknowledgedWriteMissingAfterHealingIsLost() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 3, 20, 30, 201);
		finalRead("k", "a");
		CheckReport report = check();
		assertThat(report.lostTotal()).isEqualTo(1);
		assertThat(report.lost()).containsEntry(3, 1L);
		assertThat(report.lostWithAckAtLeast(2)).isEqualTo(1);
		assertThat(report.resurrected()).isZero();
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).startsWith("lost: k"));
	}

	@Test
	void anAcknowledgedPutReadAsAbsentAfterHealingIsLost() {
		put("k", "a", 1, 0, 10, 201);
		finalRead("k", null);
		assertThat(check().lost()).containsEntry(1, 1L);
	}

	@Test
	void anAcknowledgedDeleteUndoneIsResurrected() {
		put("k", "a", 2, 0, 10, 201);
		delete("k", 2, 20, 30, 202);
		finalRead("k", "a");
		CheckReport report = check();
		assertThat(report.resurrected()).isEqualTo(1);
		assertThat(report.lostTotal()).isZero();
	}

	@Test
	void writesWithoutAnAnswerMayOrMayNotBeApplied() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 30, 504);
		put("j", "c", 2, 0, 10, 201);
		delete("j", 2, 20, 30, -1);
		get("k", "b", 2, 40, 50, 200);
		get("k", "a", 2, 60, 70, 200);
		get("j", null, 2, 40, 50, 404);
		get("j", "c", 2, 60, 70, 200);
		finalRead("k", "a");
		finalRead("j", "c");
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void anUnansweredWriteMayTakeEffectAfterALaterAcknowledgedOne() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 30, -1);
		put("k", "c", 2, 40, 50, 201);
		get("k", "b", 2, 60, 70, 200);
		put("j", "d", 2, 0, 10, 201);
		delete("j", 2, 20, 30, 504);
		put("j", "e", 2, 40, 50, 201);
		get("j", null, 2, 60, 70, 404);
		finalRead("k", "b");
		finalRead("j", null);
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void anAcknowledgedWriteReadAfterALaterAcknowledgedOneIsStillStale() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 30, -1);
		put("k", "c", 2, 40, 50, 201);
		get("k", "a", 2, 60, 70, 200);
		finalRead("k", "a");
		CheckReport report = check();
		assertThat(report.stale()).isEqualTo(1);
		assertThat(report.lost()).containsEntry(2, 1L);
	}

	@Test
	void aReadOlderThanAQuorumWriteCompletedBeforeItIsStale() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 30, 201);
		get("k", "a", 2, 40, 50, 200);
		CheckReport report = check();
		assertThat(report.stale()).isEqualTo(1);
		assertThat(report.staleAllowed()).isZero();
	}

	@Test
	void anAbsentReadAfterAQuorumPutIsStale() {
		put("k", "a", 3, 0, 10, 201);
		get("k", null, 1, 40, 50, 404);
		assertThat(check().stale()).isEqualTo(1);
	}

	@Test
	void aReadThatNeedNotIntersectTheWriteMayBeOlder() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 1, 20, 30, 201);
		get("k", "a", 2, 40, 50, 200);
		get("k", "a", 1, 40, 50, 200);
		CheckReport report = check();
		assertThat(report.stale()).isZero();
		assertThat(report.staleAllowed()).isEqualTo(2);
	}

	@Test
	void intersectionIsJudgedAgainstTheLargerFrom() {
		this.ops.add(op(Op.Kind.PUT, "k", "a", 2, 2, 0, 10, 201));
		this.ops.add(op(Op.Kind.GET, "k", null, 1, 3, 20, 30, 404));
		this.ops.add(op(Op.Kind.GET, "k", null, 2, 3, 20, 30, 404));
		CheckReport report = check();
		assertThat(report.staleAllowed()).isEqualTo(1);
		assertThat(report.stale()).isEqualTo(1);
	}

	@Test
	void readsConcurrentWithAWriteMaySeeEitherState() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 60, 201);
		get("k", "a", 2, 30, 40, 200);
		get("k", "b", 2, 30, 40, 200);
		assertThat(check().clean()).isTrue();
	}

	@Test
	void aValueNoClientSentIsNeverWritten() {
		put("k", "a", 2, 0, 10, 201);
		get("k", "garbage", 2, 20, 30, 200);
		finalRead("k", "a");
		assertThat(check().neverWritten()).isEqualTo(1);
	}

	@Test
	void aValueOfAnotherKeyIsNeverWritten() {
		put("k", "a", 2, 0, 10, 201);
		put("j", "b", 2, 0, 10, 201);
		get("k", "b", 2, 20, 30, 200);
		CheckReport report = check();
		assertThat(report.neverWritten()).isEqualTo(1);
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).contains("a value written to j"));
	}

	@Test
	void aValueReadBeforeItsWriteBeganIsNeverWritten() {
		put("k", "a", 2, 50, 60, 201);
		get("k", "a", 2, 20, 30, 200);
		assertThat(check().neverWritten()).isEqualTo(1);
	}

	@Test
	void aFinalReadThatFailsIsUnreadable() {
		put("k", "a", 2, 0, 10, 201);
		this.finals.add(op(Op.Kind.GET, "k", null, 3, 3, 100, 110, 504));
		CheckReport report = check();
		assertThat(report.unreadable()).isEqualTo(1);
		assertThat(report.clean()).isFalse();
	}

	@Test
	void answersAreCountedByTheFaultWindowTheyWereInvokedIn() {
		this.windows.add(new History.Window("kill n1", 100, 200));
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 110, 150, 504);
		put("k", "c", 2, 150, 250, -1);
		put("k", "d", 2, 250, 260, 503);
		CheckReport report = check();
		assertThat(report.answers()).containsEntry("kill", new CheckReport.Answers(2, 1, 1, 0, 1))
			.containsEntry("no fault", new CheckReport.Answers(2, 1, 0, 1, 0));
	}

	@Test
	void overlappingWritesOfOneKeyAreRefused() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 5, 20, 201);
		assertThatIllegalArgumentException().isThrownBy(this::check).withMessageContaining("overlap");
	}

	private CheckReport check() {
		return Checker.check(this.ops, this.finals, this.windows);
	}

	private void put(String key, String value, int ack, long invoked, long completed, int status) {
		this.ops.add(op(Op.Kind.PUT, key, value, ack, 3, invoked, completed, status));
	}

	private void delete(String key, int ack, long invoked, long completed, int status) {
		this.ops.add(op(Op.Kind.DELETE, key, null, ack, 3, invoked, completed, status));
	}

	private void get(String key, @Nullable String value, int ack, long invoked, long completed, int status) {
		this.ops.add(op(Op.Kind.GET, key, value, ack, 3, invoked, completed, status));
	}

	private void finalRead(String key, @Nullable String value) {
		this.finals.add(op(Op.Kind.GET, key, value, 3, 3, 1_000, 1_010, (value != null) ? 200 : 404));
	}

	private Op op(Op.Kind kind, String key, @Nullable String value, int ack, int from, long invoked, long completed,
			int status) {
		return new Op(this.ops.size() + this.finals.size(), 0, kind, key, value, ack, from, 0, invoked, completed,
				status);
	}

}
