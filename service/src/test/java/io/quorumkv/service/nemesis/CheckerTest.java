package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The checker on synthetic histories: each anomaly class is found where it is, and not
 * where it is not. Times and versions are in microseconds of one clock (times are small
 * numbers for readability; only the ttl and the slack compare them with versions).
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
	void theFaultWindowsAreListedAfterTheAnomaliesOnlyWhenThereAreAny() {
		this.windows.add(new History.Window("partition+join", 3_000_000_000L, 4_000_000_000L));
		this.windows.add(new History.Window("kill n1", 1_000_000_000L, 2_000_000_000L));
		put("k", "a", 2, 0, 10, 201);
		assertThat(check().examples()).isEmpty();
		this.finals.add(op(Op.Kind.GET, "k", null, 3, 3, 100, 110, 504));
		assertThat(check().examples())
			.contains("fault windows: kill n1 [1000..2000 ms], partition+join [3000..4000 ms]");
	}

	@Test
	void overlappingWritersAreOrderedByTheVersionsReadsReturn() {
		put("k", "a", 2, 0, 100, 201);
		put("k", "b", 2, 10, 90, 201);
		get("k", "b", 0x60, 2, 200, 210, 200);
		get("k", "a", 0x50, 2, 220, 230, 200);
		finalRead("k", "b", 0x60);
		CheckReport report = check();
		assertThat(report.stale()).as(report.summary()).isEqualTo(1);
		assertThat(report.staleBy("get")).isEqualTo(1);
		assertThat(report.staleByVersionOnly()).isEqualTo(1);
		assertThat(report.examples())
			.anySatisfy((e) -> assertThat(e).startsWith("stale: #3").contains("k=b").endsWith("(versions 50 and 60)"));
		assertThat(report.lostTotal()).isZero();
	}

	@Test
	void overlappingWritesMayBeReadInEitherOrderWhileTheirVersionsAreUnknown() {
		put("k", "a", 2, 0, 100, 201);
		put("k", "b", 2, 10, 90, 201);
		get("k", "a", 0x50, 2, 220, 230, 200);
		finalRead("k", "a", 0x50);
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void aFinalStateOlderByVersionThanAnAcknowledgedWriteLosesIt() {
		put("k", "a", 2, 0, 100, 201);
		put("k", "b", 3, 10, 90, 201);
		get("k", "b", 0x60, 1, 95, 99, 200);
		finalRead("k", "a", 0x50);
		CheckReport report = check();
		assertThat(report.lost()).as(report.summary()).containsEntry(3, 1L);
		assertThat(report.stale()).isZero();
	}

	@Test
	void aVersionThatNoWriteProducedIsAPhantom() {
		put("k", "a", 2, 0, 100, 201);
		get("k", "a", 0x50, 2, 200, 210, 200);
		get("k", "a", 0x51, 2, 220, 230, 200);
		put("j", "b", 2, 0, 100, 201);
		get("j", "b", 100 + 2_000_000, 2, 200, 210, 200);
		put("i", "c", 2, 2_000_000, 2_000_100, 201);
		get("i", "c", 0x10, 2, 2_000_200, 2_000_210, 200);
		put("h", "d", 2, 0, 10, 201);
		put("h", "e", 2, 20, 30, 201);
		get("h", "d", 0x05, 2, 5, 6, 200);
		get("h", "e", 0x05, 2, 40, 50, 200);
		CheckReport report = check();
		assertThat(report.phantom()).as(report.summary()).isEqualTo(4);
		assertThat(report.clean()).isFalse();
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).contains("was read with version 50 before"))
			.anySatisfy((e) -> assertThat(e).contains("a version younger than its write"))
			.anySatisfy((e) -> assertThat(e).contains("a version older than its write"))
			.anySatisfy((e) -> assertThat(e).contains("is the value d's"));
	}

	@Test
	void versionsWithinTheirWritesTimeAndSlackAreNoPhantoms() {
		put("k", "a", 2, 1_000_000, 1_000_100, 201);
		get("k", "a", 1_000_100 + 900_000, 2, 2_000_000, 2_000_010, 200);
		put("j", "b", 2, 1_000_000, 1_000_100, -1);
		get("j", "b", 9_000_000, 2, 9_000_010, 9_000_020, 200);
		put("i", "c", 2, 1_000_000, 1_000_100, 201);
		get("i", "c", 1_000_000 - 900_000, 2, 2_000_000, 2_000_010, 200);
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void aValueReadPastItsTtlAndTheMarginIsExpired() {
		putTtl("k", "a", 1, 2, 0, 100, 201);
		get("k", "a", 0x50, 2, 1_000_050 + 260_000, 1_400_000, 200);
		CheckReport report = check();
		assertThat(report.expired()).as(report.summary()).isEqualTo(1);
		assertThat(report.examples())
			.anySatisfy((e) -> assertThat(e).startsWith("expired: #1").contains("past its expiry"));
	}

	@Test
	void aValueReadNearItsExpiryOrAbsentAfterItIsClean() {
		putTtl("k", "a", 1, 2, 0, 100, 201);
		get("k", "a", 0x50, 2, 1_000_050 + 240_000, 1_400_000, 200);
		get("k", null, 2, 800_000, 900_000, 404);
		get("k", null, 2, 5_000_000, 5_000_100, 404);
		this.finals.add(op(Op.Kind.GET, "k", null, 3, 3, 9_000_000, 9_000_100, 404));
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void anAbsentReadBeforeAnAcknowledgedValueExpiresIsStale() {
		putTtl("k", "a", 2, 2, 0, 100, 201);
		get("k", "a", 0x50, 2, 200, 300, 200);
		get("k", null, 2, 1_000_000, 1_100_000, 404);
		this.finals.add(op(Op.Kind.GET, "k", null, 3, 3, 9_000_000, 9_000_100, 404));
		CheckReport report = check();
		assertThat(report.stale()).as(report.summary()).isEqualTo(1);
		assertThat(report.lostTotal()).isZero();
		assertThat(report.expired()).isZero();
	}

	@Test
	void aNotModifiedIsAReadOfTheVersionSent() {
		put("k", "a", 2, 0, 10, 201);
		get("k", "a", 0x05, 2, 20, 30, 200);
		conditional("k", null, 0x05, 0x05, 2, 40, 50, 304);
		put("k", "b", 2, 60, 70, 201);
		conditional("k", null, 0x05, 0x05, 2, 80, 90, 304);
		conditional("k", "b", 0x05, 0x65, 2, 80, 90, 200);
		CheckReport report = check();
		assertThat(report.stale()).as(report.summary()).isEqualTo(1);
		assertThat(report.staleBy("304")).isEqualTo(1);
		assertThat(report.staleByVersionOnly()).isZero();
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).startsWith("stale: #4"));
		assertThat(report.wrongConditional()).isZero();
		assertThat(report.neverWritten()).isZero();
	}

	@Test
	void aNotModifiedForAnotherVersionOrAnOkForTheSameIsWrong() {
		put("k", "a", 2, 0, 10, 201);
		put("k", "b", 2, 20, 30, 201);
		get("k", "b", 0x25, 2, 40, 50, 200);
		get("k", "a", 0x05, 2, 11, 19, 200);
		conditional("k", null, 0x05, 0x25, 2, 60, 70, 304);
		conditional("k", "b", 0x25, 0x25, 2, 60, 70, 200);
		CheckReport report = check();
		assertThat(report.wrongConditional()).as(report.summary()).isEqualTo(2);
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).contains("a 304 for another version"))
			.anySatisfy((e) -> assertThat(e).contains("a 200 for the very version sent"));
	}

	@Test
	void aScanPageReadsEveryKeyItCovers() {
		put("k1", "a", 2, 0, 10, 201);
		put("k2", "b", 2, 0, 10, 201);
		put("k3", "c", 2, 0, 10, 201);
		put("k4", "d", 2, 0, 10, 201);
		// A page of limit 3 from k1 to k4 (exclusive) with k1 and k3, not full: it speaks
		// for k2 (absent: stale) but not for k4, beyond its end.
		scan("k1", false, "k4", 3, 2, 20, 30, record("k1", "a", 0x05), record("k3", "c", 0x05));
		CheckReport report = check();
		assertThat(report.stale()).as(report.summary()).isEqualTo(1);
		assertThat(report.staleBy("scan")).isEqualTo(1);
		assertThat(report.examples()).anySatisfy((e) -> assertThat(e).startsWith("stale: #4 c0 SCAN k2"));
		assertThat(report.okReads()).isEqualTo(1);
		assertThat(report.reads()).containsEntry("scan page", 1L).containsEntry("scan key", 3L);
	}

	@Test
	void aFullPageSpeaksOnlyUpToItsLastRecord() {
		put("k1", "a", 2, 0, 10, 201);
		put("k2", "b", 2, 0, 10, 201);
		put("k3", "c", 2, 0, 10, 201);
		scan("k1", false, "k9", 1, 2, 20, 30, record("k1", "a", 0x05));
		scan("k1", true, "k9", 2, 2, 20, 30, record("k2", "b", 0x05), record("k3", "c", 0x05));
		scan("k3", true, "k9", 2, 2, 20, 30);
		put("k5", "e", 2, 25, 40, 201);
		CheckReport report = check();
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	void aScanReturningOlderValuesOrOnesNeverWrittenIsCaught() {
		put("k1", "a", 2, 0, 10, 201);
		put("k1", "b", 2, 20, 30, 201);
		put("k2", "c", 2, 0, 10, 201);
		scan("k1", false, "k9", 5, 2, 40, 50, record("k1", "a", 0x05), record("k2", "c", 0x05),
				record("k3", "z", 0x05));
		CheckReport report = check();
		assertThat(report.staleBy("scan")).as(report.summary()).isEqualTo(1);
		assertThat(report.neverWritten()).isEqualTo(1);
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

	private void get(String key, String value, long version, int ack, long invoked, long completed, int status) {
		this.ops.add(new Op(this.ops.size(), 0, Op.Kind.GET, key, value, ack, 3, 0, invoked, completed, status,
				Long.toHexString(version), 0, null, null));
	}

	private void putTtl(String key, String value, long ttlSeconds, int ack, long invoked, long completed, int status) {
		this.ops.add(new Op(this.ops.size(), 0, Op.Kind.PUT, key, value, ack, 3, 0, invoked, completed, status, null,
				ttlSeconds, null, null));
	}

	/**
	 * A GET with {@code If-None-Match: sent}, answered {@code answered} as its ETag (and
	 * {@code value} with a 200).
	 */
	private void conditional(String key, @Nullable String value, long sent, long answered, int ack, long invoked,
			long completed, int status) {
		this.ops.add(new Op(this.ops.size(), 0, Op.Kind.GET, key, value, ack, 3, 0, invoked, completed, status,
				Long.toHexString(answered), 0, Long.toHexString(sent), null));
	}

	private void scan(String lower, boolean after, String end, int limit, int ack, long invoked, long completed,
			Op.Record... records) {
		this.ops.add(new Op(this.ops.size(), 0, Op.Kind.SCAN, lower, null, ack, 3, 0, invoked, completed, 200, null, 0,
				null, new Op.Page(after, end, limit, List.of(records))));
	}

	private static Op.Record record(String key, String value, long version) {
		return new Op.Record(key, value, Long.toHexString(version));
	}

	private void finalRead(String key, @Nullable String value) {
		this.finals.add(op(Op.Kind.GET, key, value, 3, 3, 1_000, 1_010, (value != null) ? 200 : 404));
	}

	private void finalRead(String key, String value, long version) {
		this.finals.add(new Op(this.ops.size() + this.finals.size(), 0, Op.Kind.GET, key, value, 3, 3, 0, 1_000, 1_010,
				200, Long.toHexString(version), 0, null, null));
	}

	private Op op(Op.Kind kind, String key, @Nullable String value, int ack, int from, long invoked, long completed,
			int status) {
		return new Op(this.ops.size() + this.finals.size(), 0, kind, key, value, ack, from, 0, invoked, completed,
				status);
	}

}
