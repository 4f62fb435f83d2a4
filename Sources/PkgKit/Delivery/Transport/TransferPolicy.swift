
/// How long a transfer may stay silent, and the clock that measures it (and the waits between
/// retries). Tests pass a clock they advance by hand, so that time-outs and backoff are tested
/// without waiting on the wall clock.
public struct TransferPolicy: Sendable {
    /// How long the client may wait for the next byte (or the response head) before the transfer
    /// fails with `TransportError.timedOut`. Only time spent waiting on the network counts: a
    /// reader that is slow to take what arrived (a slow disk) never makes a transfer time out,
    /// and never stops the timeout from counting once it waits again.
    public var idleTimeout: Duration
    /// The clock time-outs and retry delays are measured on.
    public var clock: any Clock<Duration>

    /// A policy; 30 seconds of silence by default, on the continuous clock.
    public init(idleTimeout: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock()) {
        precondition(idleTimeout > .zero, "the idle timeout must be positive")
        self.idleTimeout = idleTimeout
        self.clock = clock
    }
}
