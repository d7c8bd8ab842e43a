package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * This node's durable part in agreeing on ring changes: the proposal it has prepared (at
 * most one) and the outcome of the last proposals it decided or learned, in
 * {@code <data folder>/ring-agreement}. The file is an {@code AtomicFiles} file of magic
 * {@code qkv-ring-agreement}, version 1, whose body is JSON:
 * {@code {"pending": <proposal> | null, "decisions": [{"id": …, "outcome": "committed" |
 * "aborted"}, …]}}, newest decision last, at most {@link #MAX_DECISIONS}. Invariants: a
 * node holds at most one prepared proposal; it is written before the node votes for it,
 * and cleared only once its outcome is known.
 *
 * @param pending the prepared proposal, or null
 * @param decisions the newest outcomes
 */
record AgreementLog(@Nullable Proposal pending, List<Decision> decisions) {

	static final String FILE = "ring-agreement";

	static final int MAX_DECISIONS = 64;

	private static final String MAGIC = "qkv-ring-agreement";

	private static final JsonMapper JSON = JsonMapper.shared();

	AgreementLog {
		decisions = List.copyOf(decisions);
	}

	static AgreementLog empty() {
		return new AgreementLog(null, List.of());
	}

	AgreementLog withPending(@Nullable Proposal proposal) {
		return new AgreementLog(proposal, this.decisions);
	}

	/** Records an outcome and clears the pending proposal if it is that one. */
	AgreementLog decided(String id, Outcome outcome) {
		List<Decision> next = new ArrayList<>(this.decisions);
		next.removeIf((decision) -> decision.id().equals(id));
		next.add(new Decision(id, outcome));
		while (next.size() > MAX_DECISIONS) {
			next.removeFirst();
		}
		Proposal pending = (this.pending != null && this.pending.id().equals(id)) ? null : this.pending;
		return new AgreementLog(pending, next);
	}

	Optional<Outcome> outcome(String id) {
		return this.decisions.stream().filter((d) -> d.id().equals(id)).map(Decision::outcome).findFirst();
	}

	static AgreementLog read(Path folder) {
		String body = io.quorumkv.service.cluster.DataFiles.read(folder.resolve(FILE), MAGIC, 1);
		if (body == null) {
			return empty();
		}
		try {
			JsonNode root = JSON.readTree(body);
			JsonNode pending = root.get("pending");
			List<Decision> decisions = new ArrayList<>();
			for (JsonNode decision : root.required("decisions").values()) {
				decisions.add(new Decision(decision.required("id").stringValue(), Outcome
					.valueOf(decision.required("outcome").stringValue().toUpperCase(java.util.Locale.ROOT))));
			}
			return new AgreementLog((pending == null || pending.isNull()) ? null : Proposal.fromTree(pending),
					decisions);
		}
		catch (JacksonException | IllegalArgumentException ex) {
			throw new IllegalStateException(
					"corrupt file " + folder.resolve(FILE).toAbsolutePath() + ": " + ex.getMessage(), ex);
		}
	}

	void write(Path folder) {
		ObjectNode root = JSON.createObjectNode();
		if (this.pending != null) {
			root.set("pending", this.pending.tree());
		}
		else {
			root.putNull("pending");
		}
		ArrayNode list = root.putArray("decisions");
		for (Decision decision : this.decisions) {
			list.addObject().put("id", decision.id()).put("outcome", decision.outcome().label());
		}
		io.quorumkv.service.cluster.DataFiles.write(folder.resolve(FILE), MAGIC, 1, JSON.writeValueAsString(root));
	}

	/** How a proposal ended. */
	enum Outcome {

		COMMITTED, ABORTED;

		String label() {
			return name().toLowerCase(java.util.Locale.ROOT);
		}

	}

	/**
	 * One outcome.
	 *
	 * @param id the proposal's id
	 * @param outcome how it ended
	 */
	record Decision(String id, Outcome outcome) {
	}

}
