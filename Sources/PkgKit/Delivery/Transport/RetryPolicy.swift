import Foundation

/// How transient failures are retried: a few attempts with exponential backoff. Connection
/// resets, timeouts, unreachable servers and HTTP 5xx are transient (`TransportError.isTransient`);
/// 4xx and everything else fail at once.
///
/// `maximumAttempts` counts consecutive attempts that made no progress: a download that
/// received bytes before failing starts counting (and backing off) afresh, so a connection
/// that drops every few megabytes still finishes. `maximumTotalAttempts` bounds the whole.
public struct RetryPolicy: Sendable, Equatable {
    /// Consecutive attempts without progress before giving up (1: no retry).
    public var maximumAttempts: Int
    /// Attempts in all, progress or not.
    public var maximumTotalAttempts: Int
    /// The wait before the first retry, in seconds.
    public var initialDelay: TimeInterval
    /// Each further wait is the previous one times this.
    public var multiplier: Double
    /// No wait is longer than this, in seconds.
    public var maximumDelay: TimeInterval
    /// Each wait is shortened at random by up to this fraction, so that many clients failing
    /// together do not retry together.
    public var jitter: Double

    /// A policy; the default makes 4 attempts, waiting 0.5, 1 and 2 seconds (less jitter).
    public init(maximumAttempts: Int = 4, maximumTotalAttempts: Int = 100, initialDelay: TimeInterval = 0.5,
                multiplier: Double = 2, maximumDelay: TimeInterval = 8, jitter: Double = 0.2) {
        precondition(maximumAttempts >= 1 && maximumTotalAttempts >= 1, "at least one attempt")
        self.maximumAttempts = maximumAttempts
        self.maximumTotalAttempts = maximumTotalAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
    }

    /// One attempt, no retry.
    public static let none = RetryPolicy(maximumAttempts: 1, maximumTotalAttempts: 1)

    /// The wait before retry number `retry` (1 for the first retry), jitter left out.
    public func delay(beforeRetry retry: Int) -> TimeInterval {
        guard retry >= 1 else { return 0 }
        return min(maximumDelay, initialDelay * pow(multiplier, Double(retry - 1)))
    }

    /// True when `error` may pass by itself if tried again.
    public static func isTransient(_ error: Error) -> Bool {
        (error as? TransportError)?.isTransient ?? false
    }

    /// Runs `attempt` until it succeeds, fails with a final error, or the attempts run out
    /// (then its last error is thrown). `attempt` receives the attempt number (1, 2, …) and
    /// reports progress through the flag it is given; `willRetry` hears of each retry. The waits
    /// between attempts are slept on `clock`. With `budget`, `maximumTotalAttempts` bounds the
    /// attempts of every run sharing it, together. A cancelled task stops at once with
    /// `CancellationError`.
    public func run<T>(clock: any Clock<Duration> = ContinuousClock(), budget: RetryBudget? = nil,
                       _ attempt: (_ number: Int, _ madeProgress: inout Bool) async throws -> T,
                       willRetry: ((_ error: Error, _ delay: TimeInterval) -> Void)? = nil) async throws -> T {
        var total = 0
        var withoutProgress = 0
        while true {
            try Task.checkCancellation()
            total += 1
            let spent = budget?.spend() ?? total
            var progress = false
            do {
                return try await attempt(total, &progress)
            } catch {
                withoutProgress = progress ? 1 : withoutProgress + 1
                guard Self.isTransient(error), withoutProgress < maximumAttempts, spent < maximumTotalAttempts else { throw error }
                var wait = delay(beforeRetry: withoutProgress)
                if jitter > 0 { wait *= 1 - Double.random(in: 0...min(jitter, 1)) }
                willRetry?(error, wait)
                try await clock.sleep(for: .nanoseconds(Int64(max(wait, 0) * 1e9)), tolerance: nil)
            }
        }
    }
}
