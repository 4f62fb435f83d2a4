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
/// is buffered, and a full buffer holds the client back until the reader makes room.
@Suite struct ResponseBodyStateTests {
    private let loop = EmbeddedEventLoop()
    private let head = HTTPResponseHead(version: .http1_1, status: .ok)
    private struct Cut: Error {}

    private func part(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// What the reader gets when it asks now; nil when it would wait.
    private func take(_ state: LockedValue<ResponseBodyState>) async -> Result<String?, any Error>? {
        do {
            return .success(try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.PartWaiter) in
                switch state.withLock({ $0.take(waiter) }) {
                case .wait: waiter.resume(throwing: Waited())
                case .answer(let answer, _, _): waiter.resume(with: answer)
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
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.received(head, gate: nil) }
        for text in ["one", "two"] {
            guard case .buffered = state.withLock({ $0.arrived(part(text), on: loop) }) else {
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
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 1 << 20))
        _ = state.withLock { $0.received(head, gate: nil) }
        _ = state.withLock { $0.arrived(part("kept?"), on: loop) }
        _ = state.withLock { $0.cancel() }
        guard case .buffered = state.withLock({ $0.arrived(part("late"), on: loop) }) else {
            Issue.record("a part after the cancel was handed on")
            return
        }
        guard case .failure(let error)? = await take(state) else {
            Issue.record("a cancelled body still gave a part")
            return
        }
        #expect(error is CancellationError)
    }

    @Test func aFullBufferHoldsTheClientUntilTheReaderMakesRoom() async throws {
        let state = LockedValue(ResponseBodyState(url: "http://example.com/a", limit: 8))
        _ = state.withLock { $0.received(head, gate: nil) }
        _ = state.withLock { $0.arrived(part("1234"), on: loop) }
        guard case .full(let room) = state.withLock({ $0.arrived(part("5678"), on: loop) }) else {
            Issue.record("a full buffer did not hold the client back")
            return
        }
        #expect(!state.withLock { $0.wantsMore })
        let freed = LockedValue<EventLoopPromise<Void>?>(nil)
        let first = try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.PartWaiter) in
            guard case .answer(let answer, let promise, _) = state.withLock({ $0.take(waiter) }) else { return }
            freed.withLock { $0 = promise }
            waiter.resume(with: answer)
        }
        #expect(first.map { String(buffer: $0) } == "1234")
        #expect(freed.current?.futureResult === room.futureResult)
        #expect(state.withLock { $0.wantsMore })
        room.succeed(())
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
