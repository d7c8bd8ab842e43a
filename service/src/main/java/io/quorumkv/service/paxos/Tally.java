package io.quorumkv.service.paxos;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.Predicate;

import io.quorumkv.service.cluster.RingLayout.Targets;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The answers of one Paxos phase from a key's acceptors, decided as soon as a majority of
 * the key's owners answered well, or as soon as that can no longer happen. While the key
 * moves (a join or a decommission) its old and its new owners are two groups
 * ({@link Targets}), and each needs its own majority: no two rings can then give two
 * quorums that do not meet.
 */
final class Tally<T> {

	private final Targets targets;

	private final Predicate<T> good;

	private final int majority;

	/** Whether a lost phase still waits for every answer (to learn what was accepted). */
	private final boolean waitWhenLost;

	private int answered;

	private final List<T> goods = new ArrayList<>();

	private final List<T> bads = new ArrayList<>();

	private int goodOld;

	private int goodNew;

	private int badOld;

	private int badNew;

	private int errors;

	private @Nullable Throwable firstError;

	private Tally(Targets targets, Predicate<T> good, boolean waitWhenLost) {
		this.targets = targets;
		this.good = good;
		this.waitWhenLost = waitWhenLost;
		this.majority = targets.from() / 2 + 1;
	}

	/**
	 * Calls every target ({@code call} by its index in {@code targets}) and decides at
	 * once: the calls still under way then are cancelled.
	 */
	static <T> Mono<Tally<T>> collect(Targets targets, IntFunction<Mono<T>> call, Predicate<T> good) {
		return collect(targets, call, good, false);
	}

	/**
	 * As {@link #collect(Targets, IntFunction, Predicate)}, but a phase that cannot
	 * succeed any more still waits for every answer (each within its deadline) when
	 * {@code waitWhenLost}: a proposal refused by every acceptor was accepted nowhere.
	 */
	static <T> Mono<Tally<T>> collect(Targets targets, IntFunction<Mono<T>> call, Predicate<T> good,
			boolean waitWhenLost) {
		Tally<T> tally = new Tally<>(targets, good, waitWhenLost);
		return Flux.range(0, targets.size())
			.flatMap((index) -> Mono.defer(() -> call.apply(index))
				.map((answer) -> new Answer<T>(index, answer, null))
				.onErrorResume((error) -> Mono.just(new Answer<>(index, null, error))), targets.size())
			.takeUntil(tally::add)
			.then(Mono.fromCallable(() -> tally));
	}

	/** One answer or failure; true once the phase is decided. */
	private synchronized boolean add(Answer<T> answer) {
		this.answered++;
		boolean ok = answer.value() != null && this.good.test(answer.value());
		if (answer.value() == null) {
			this.errors++;
			if (this.firstError == null) {
				this.firstError = answer.error();
			}
		}
		else if (ok) {
			this.goods.add(answer.value());
		}
		else {
			this.bads.add(answer.value());
		}
		boolean old = this.targets.is(answer.index(), Targets.OLD);
		boolean next = this.targets.is(answer.index(), Targets.NEW);
		if (ok) {
			this.goodOld += old ? 1 : 0;
			this.goodNew += next ? 1 : 0;
		}
		else {
			this.badOld += old ? 1 : 0;
			this.badNew += next ? 1 : 0;
		}
		return succeeded() || (lost() && (!this.waitWhenLost || this.answered == this.targets.size()));
	}

	/** A majority of the old owners and of the new ones answered well. */
	synchronized boolean succeeded() {
		return this.goodOld >= this.majority && this.goodNew >= this.majority;
	}

	private boolean lost() {
		int tolerated = this.targets.from() - this.majority;
		return this.badOld > tolerated || this.badNew > tolerated;
	}

	/** The good answers so far. */
	synchronized List<T> goods() {
		return List.copyOf(this.goods);
	}

	/** The answers that were not good (refusals), failures left out. */
	synchronized List<T> bads() {
		return List.copyOf(this.bads);
	}

	/**
	 * Whether every target answered and refused: then nothing was accepted anywhere. A
	 * phase decided early leaves calls unanswered, which may have been accepted.
	 */
	synchronized boolean fullyRefused() {
		return this.bads.size() == this.targets.size();
	}

	/** Calls that failed (no answer, a broken stream, a refusal of the transport). */
	synchronized int errors() {
		return this.errors;
	}

	synchronized String summary() {
		return this.goods.size() + " of " + this.targets.size() + " acceptors agreed, " + this.bads.size()
				+ " refused, " + this.errors + " failed"
				+ ((this.firstError != null) ? " (first: " + this.firstError.getMessage() + ")" : "");
	}

	private record Answer<T>(int index, @Nullable T value, @Nullable Throwable error) {
	}

}
