#if os(Linux)
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import PkgKitTransport
import PkgKitSupport
import PkgKitFormat

/// The state machine of one response of `AsyncHTTPClientTransport`, driven event by event: every
/// part that arrived reaches the reader before the request's failure does, a cancel drops what
/// is buffered, and a full buffer closes the connection's valve until the reader makes room.
@Suite struct ResponseBodyStateTests {
    private let head = HTTPResponseHead(version: .http1_1, status: .ok)
    private struct Cut: Error {}

    /// A valve on a loop of its own, made on the calling thread (the loop's).
    private static func valve() -> NIOLoopBound<ReadGate> {
        NIOLoopBound(ReadGate(), eventLoop: EmbeddedEventLoop())
    }

    private func part(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// What the reader gets when it asks now; nil when it would wait.
    private func take(_ state: LockedValue<ResponseBodyState>) async -> Result<String?, any Error>? {
        do {
            return .success(try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.PartWaiter) in
                switch state.withLock({ $0.take(waiter) }) {
                case .wait: waiter.resume(throwing: Waited())
                case .answer(let answer, _): waiter.resume(with: answer)
                }
            }.map { String(buffer: $0) })
        } catch is Waited {
            return nil
        } catch {
            return .failure(error)
        }
    }
    private struct Waited: Error {}

    @Test func everyPartThatArrivedIsReadBeforeTheFailure() async throws {
        let gate = Self.valve()
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.received(head, gate: gate) }
        for text in ["one", "two"] {
            guard case .buffered = state.withLock({ $0.arrived(part(text)) }) else {
                Issue.record("a part under the limit was not simply buffered")
                return
            }
        }
        _ = state.withLock { $0.finished(.failure(Cut())) }
        #expect(try await take(state)?.get() == "one")
        #expect(try await take(state)?.get() == "two")
        guard case .failure(let error)? = await take(state) else {
            Issue.record("the failure did not follow the parts")
            return
        }
        #expect(error is Cut)
    }

    @Test func aCancelDropsWhatIsBufferedAndLaterParts() async {
        let gate = Self.valve()
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.received(head, gate: gate) }
        _ = state.withLock { $0.arrived(part("kept?")) }
        let waiters = state.withLock { $0.cancel() }
        #expect(waiters?.gate?.eventLoop === gate.eventLoop, "a body cancelled mid-stream lets its connection's valve go")
        guard case .buffered = state.withLock({ $0.arrived(part("late")) }) else {
            Issue.record("a part after the cancel was handed on")
            return
        }
        guard case .failure(let error)? = await take(state) else {
            Issue.record("a cancelled body still gave a part")
            return
        }
        #expect(error is CancellationError)
    }

    @Test func aFullBufferClosesTheValveUntilTheReaderMakesRoom() async throws {
        let gate = Self.valve()
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 8))
        _ = state.withLock { $0.received(head, gate: gate) }
        _ = state.withLock { $0.arrived(part("1234")) }
        #expect(state.withLock { $0.wantsMore })
        guard case .buffered = state.withLock({ $0.arrived(part("5678")) }) else {
            Issue.record("a part with no reader waiting was not buffered")
            return
        }
        #expect(!state.withLock { $0.wantsMore }, "a full buffer must close the valve")
        let reopened = LockedValue<NIOLoopBound<ReadGate>?>(nil)
        let first = try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.PartWaiter) in
            guard case .answer(let answer, let open) = state.withLock({ $0.take(waiter) }) else { return }
            reopened.withLock { $0 = open }
            waiter.resume(with: answer)
        }
        #expect(first.map { String(buffer: $0) } == "1234")
        #expect(reopened.current?.eventLoop === gate.eventLoop, "the reader that made room must poke the valve")
        #expect(state.withLock { $0.wantsMore })
    }

    @Test func aCancelAfterTheEndLeavesTheConnectionToTheClient() {
        let gate = Self.valve()
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.received(head, gate: gate) }
        _ = state.withLock { $0.finished(.success(())) }
        #expect(state.withLock { $0.cancel() } == nil, "a body that ended has no transfer left to cancel")
    }

    @Test func aHeadWaiterHearsWhyThereIsNoHead() async {
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.finished(.success(())) }
        do {
            _ = try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.HeadWaiter) in
                if let ready = state.withLock({ $0.waitForHead(waiter) }) { waiter.resume(with: ready) }
            }
            Issue.record("a request that ended without a head gave one")
        } catch {
            #expect(error as? TransportError == .connectionLost(url: "http://example.com/a", "the server sent no response"))
        }
    }
}
#endif
