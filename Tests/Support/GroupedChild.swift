import Foundation
import PkgKit
#if os(Linux)
import CSyscalls
#endif

/// A program started in a process group of its own, its stdout and stderr on pipes, so that when
/// it outlives its deadline the whole group (the program and everything it started) is killed at
/// once, and nothing it left behind keeps a pipe open.
struct GroupedChild {
    /// The child's process id, which is also its group's.
    let pid: pid_t
    /// The read end of the child's stdout.
    let stdout: Int32
    /// The read end of the child's stderr.
    let stderr: Int32

    /// Starts `program` with `arguments` (stdin from /dev/null) in `directory`, with exactly `environment`.
    init(_ program: String, _ arguments: [String], in directory: String?, environment: [String: String]) throws {
        let out = try Self.pipe(), err = try Self.pipe()
        defer { close(out.write); close(err.write) }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        if let directory {
            #if os(Linux)
            CSyscalls_spawnChdir(&actions, directory)
            #else
            posix_spawn_file_actions_addchdir_np(&actions, directory)
            #endif
        }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Group 0: a new group whose id is the child's own pid. Signals back to their defaults and
        // none blocked, whatever the test runner set for itself.
        posix_spawnattr_setpgroup(&attributes, 0)
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let failure = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard failure == 0 else {
            close(out.read); close(err.read)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        self.pid = pid
        stdout = out.read
        stderr = err.read
    }

    /// Waits for the child to exit, reading both pipes to their end meanwhile (so a chatty child
    /// cannot block on a full pipe). Past `deadline`, kills the child's group and returns nil
    /// with what it printed until then.
    func wait(deadline: Duration) -> (status: Int32?, stdout: Data, stderr: Data) {
        let done = DispatchGroup()
        let printed = LockedValue((stdout: Data(), stderr: Data()))
        let status = LockedValue(Int32?.none)
        let (pid, stdout, stderr) = (pid, stdout, stderr)
        for (descriptor, isStdout) in [(stdout, true), (stderr, false)] {
            done.enter()
            Thread.detachNewThread {
                let data = Self.readToEnd(descriptor)
                printed.withLock { if isStdout { $0.stdout = data } else { $0.stderr = data } }
                done.leave()
            }
        }
        done.enter()
        Thread.detachNewThread {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            // The exit status, or the signal's number for a child a signal ended.
            status.withLock { $0 = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f }
            done.leave()
        }
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        var timedOut = false
        if done.wait(timeout: .now() + seconds) == .timedOut {
            timedOut = true
            kill(-pid, SIGKILL)
            // Only a process that left the group (`setsid`) could still hold a pipe open now; its
            // readers are then left to it, with the descriptors they read.
            if done.wait(timeout: .now() + 10) == .timedOut { return (nil, Data(), Data()) }
        }
        close(stdout)
        close(stderr)
        let result = printed.withLock { $0 }
        return (timedOut ? nil : status.withLock { $0 }, result.stdout, result.stderr)
    }

    /// Everything `descriptor` gives until its end (or an error).
    private static func readToEnd(_ descriptor: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { data.append(contentsOf: buffer[0..<count]) }
            else if count == 0 || errno != EINTR { return data }
        }
    }

    /// A pipe whose ends close on exec (at once, so that no child another test starts meanwhile
    /// inherits them and holds the pipe open).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        #if os(Linux)
        guard CSyscalls_pipeClosedOnExec(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        #else
        guard Foundation.pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        #endif
        return (ends[0], ends[1])
    }
}
