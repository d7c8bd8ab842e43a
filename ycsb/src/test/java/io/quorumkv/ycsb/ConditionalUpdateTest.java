package io.quorumkv.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import io.quorumkv.client.StubNode;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The {@value QuorumKvDb#CONDITIONAL_UPDATE} flag: how it is read, and that it turns the
 * binding's update (workload F's read-modify-write) into conditional writes, against a
 * stub node that counts them.
 */
class ConditionalUpdateTest {

	@Test
	void theFlagIsTrueOrFalseInAnyCaseAndOffWhenAbsent() {
		assertThat(Flags.parse(null, "f")).isFalse();
		assertThat(Flags.parse(" ", "f")).isFalse();
		assertThat(Flags.parse("true", "f")).isTrue();
		assertThat(Flags.parse(" TRUE ", "f")).isTrue();
		assertThat(Flags.parse("False", "f")).isFalse();
		assertThatIllegalArgumentException().isThrownBy(() -> Flags.parse("yes", QuorumKvDb.CONDITIONAL_UPDATE))
			.withMessageContaining(QuorumKvDb.CONDITIONAL_UPDATE);
	}

	@Test
	void aBadValueStopsTheBindingAtInit() {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED)) {
			assertThatExceptionOfType(DBException.class)
				.isThrownBy(() -> open(node, Map.of(QuorumKvDb.CONDITIONAL_UPDATE, "1")))
				.withMessageContaining(QuorumKvDb.CONDITIONAL_UPDATE);
		}
	}

	@Test
	void withTheFlagAnUpdateIsAConditionalWriteOfTheMergedRecord() throws DBException {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED)) {
			DB db = open(node, Map.of(QuorumKvDb.CONDITIONAL_UPDATE, "true"));
			try {
				assertThat(db.insert("t", "u1", fields("f0", "a", "f1", "b"))).isEqualTo(Status.OK);
				assertThat(db.update("t", "u1", fields("f1", "B"))).isEqualTo(Status.OK);
				assertThat(db.update("t", "u2", fields("f0", "new"))).isEqualTo(Status.OK);
			}
			finally {
				db.cleanup();
			}
			assertThat(node.plainWrites()).isEqualTo(1);
			assertThat(node.conditionalWrites()).isEqualTo(2);
			assertThat(node.value("t/u1").map(FieldCodec::decode)).hasValueSatisfying((record) -> {
				assertThat(record).containsOnlyKeys("f0", "f1");
				assertThat(record.get("f1")).isEqualTo("B".getBytes());
			});
			assertThat(node.value("t/u2").map(FieldCodec::decode))
				.hasValueSatisfying((record) -> assertThat(record).containsOnlyKeys("f0"));
		}
	}

	@Test
	void roundsLostToAnotherWriterAreCountedAndTheTenthLossFailsTheUpdate() throws DBException {
		CasCounts counts = QuorumKvDb.counts();
		long updates = counts.updates();
		long retries = counts.retries();
		long conflicts = counts.conflicts();
		// every read of a present key is followed by another writer's write: every
		// conditional write gets 412
		try (StubNode node = StubNode.start(StubNode.Mode.CONTENDED)) {
			DB db = open(node, Map.of(QuorumKvDb.CONDITIONAL_UPDATE, "true"));
			try {
				assertThat(db.insert("t", "u1", fields("f0", "a"))).isEqualTo(Status.OK);
				assertThat(db.update("t", "u1", fields("f0", "b"))).isEqualTo(Status.ERROR);
			}
			finally {
				db.cleanup();
			}
			assertThat(node.conditionalWrites()).isEqualTo(10);
		}
		assertThat(counts.updates() - updates).isEqualTo(1);
		assertThat(counts.retries() - retries).isEqualTo(9);
		assertThat(counts.conflicts() - conflicts).isEqualTo(1);
	}

	@Test
	void withoutTheFlagAnUpdateIsAPlainWrite() throws DBException {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED)) {
			DB db = open(node, Map.of());
			try {
				assertThat(db.insert("t", "u1", fields("f0", "a"))).isEqualTo(Status.OK);
				assertThat(db.update("t", "u1", fields("f1", "b"))).isEqualTo(Status.OK);
			}
			finally {
				db.cleanup();
			}
			assertThat(node.plainWrites()).isEqualTo(2);
			assertThat(node.conditionalWrites()).isZero();
		}
	}

	private static DB open(StubNode node, Map<String, String> extra) throws DBException {
		Properties properties = new Properties();
		properties.setProperty(QuorumKvDb.SEEDS, node.url().toString());
		extra.forEach(properties::setProperty);
		DB db = new QuorumKvDb();
		db.setProperties(properties);
		db.init();
		return db;
	}

	private static Map<String, ByteIterator> fields(String... namesAndValues) {
		Map<String, ByteIterator> fields = new HashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			fields.put(namesAndValues[i], new StringByteIterator(namesAndValues[i + 1]));
		}
		return fields;
	}

}
