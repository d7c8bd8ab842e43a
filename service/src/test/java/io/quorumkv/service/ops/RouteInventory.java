package io.quorumkv.service.ops;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.server.RouterFunction;

/** The (methods, path) routes of a router function, read with its visitor. */
final class RouteInventory {

	private RouteInventory() {
	}

	record Route(Set<HttpMethod> methods, String path) {
	}

	static List<Route> of(RouterFunction<?> router) {
		java.util.ArrayList<Route> routes = new java.util.ArrayList<>();
		router.accept(new org.springframework.web.reactive.function.server.RouterFunctions.Visitor() {

			@Override
			public void startNested(org.springframework.web.reactive.function.server.RequestPredicate predicate) {
			}

			@Override
			public void endNested(org.springframework.web.reactive.function.server.RequestPredicate predicate) {
			}

			@Override
			public void route(org.springframework.web.reactive.function.server.RequestPredicate predicate,
					org.springframework.web.reactive.function.server.HandlerFunction<?> handler) {
				Set<HttpMethod> methods = new HashSet<>();
				Set<String> paths = new TreeSet<>();
				predicate.accept(new PredicateParts(methods, paths));
				paths.forEach((path) -> routes.add(new Route(Set.copyOf(methods), path)));
			}

			@Override
			public void resources(
					java.util.function.Function<org.springframework.web.reactive.function.server.ServerRequest, reactor.core.publisher.Mono<org.springframework.core.io.Resource>> lookup) {
			}

			@Override
			public void attributes(Map<String, Object> attributes) {
			}

			@Override
			public void unknown(RouterFunction<?> function) {
				throw new IllegalStateException("a router function the test cannot read: " + function);
			}

		});
		return routes;
	}

	/** Collects the methods and paths of a predicate. */
	record PredicateParts(Set<HttpMethod> methods,
			Set<String> paths) implements org.springframework.web.reactive.function.server.RequestPredicates.Visitor {

		@Override
		public void method(Set<HttpMethod> methods) {
			this.methods.addAll(methods);
		}

		@Override
		public void path(String pattern) {
			this.paths.add(pattern);
		}

		@Override
		public void pathExtension(String extension) {
		}

		@Override
		public void header(String name, String value) {
		}

		@Override
		public void queryParam(String name, String value) {
		}

		@Override
		public void version(String version) {
		}

		@Override
		public void startAnd() {
		}

		@Override
		public void and() {
		}

		@Override
		public void endAnd() {
		}

		@Override
		public void startOr() {
		}

		@Override
		public void or() {
		}

		@Override
		public void endOr() {
		}

		@Override
		public void startNegate() {
		}

		@Override
		public void endNegate() {
		}

		@Override
		public void unknown(org.springframework.web.reactive.function.server.RequestPredicate predicate) {
		}

	}

}
