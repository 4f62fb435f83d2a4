import Foundation
import Testing
@testable import PkgKit

/// The one lock idiom: a value reached only through `withLock`, and a variant threads wait on.
@Suite struct LockedValueTests {
    /// Changes from many threads at once are none of them lost.
    @Test func changesFromManyThreadsAreAllKept() {
        let count = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0 ..< 10_000 { count.withLock { $0 += 1 } }
        }
        #expect(count.current == 80_000)
    }

    /// A waiter sleeps until the value satisfies its condition, and the change that satisfies it
    /// wakes it: the consumer sees every item the producer hands over, in order.
    @Test func aWaiterWakesWhenTheValueSatisfiesItsCondition() {
        let queue = ConditionLockedValue((items: [Int](), closed: false))
        let received = LockedValue([Int]())
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while let item = queue.withLock(waitingUntil: { !$0.items.isEmpty || $0.closed }, { $0.items.isEmpty ? nil : $0.items.removeFirst() }) {
                received.withLock { $0.append(item) }
            }
            done.signal()
        }
        for item in 0 ..< 1_000 { queue.withLock(thenWake: .one) { $0.items.append(item) } }
        queue.withLock(thenWake: .all) { $0.closed = true }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(received.current == Array(0 ..< 1_000))
    }

    /// A change that wakes all wakes every thread waiting for it.
    @Test func everyWaiterWakesWhenAllAreWoken() {
        let gate = ConditionLockedValue(false)
        let woken = LockedValue(0)
        let group = DispatchGroup()
        for _ in 0 ..< 4 {
            group.enter()
            Thread.detachNewThread {
                gate.withLock(waitingUntil: { $0 }) { _ in }
                woken.withLock { $0 += 1 }
                group.leave()
            }
        }
        gate.withLock(thenWake: .all) { $0 = true }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(woken.current == 4)
    }
}
