import Foundation
import PkgKit

// Downloads one URL through one of PkgKit's HTTP transports, the way sync reads a body (the
// guarded get: idle timeout, bound, back-pressure), writing it to a file; prints what happened.
// `bench/transport.sh` runs it beside curl on the same data (bench/TRANSPORT.md).
//
//   transportbench asynchttpclient|urlsession URL OUT MAX_BYTES [--timeout S] [--slow-reader MS]

let arguments = CommandLine.arguments
guard arguments.count >= 5, let limit = Int64(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: transportbench asynchttpclient|urlsession URL OUT MAX_BYTES [--timeout S] [--slow-reader MS]\n".utf8))
    exit(64)
}
func option(_ name: String) -> Double? {
    arguments.firstIndex(of: name).flatMap { arguments.count > $0 + 1 ? Double(arguments[$0 + 1]) : nil }
}
// Each platform builds one HTTP transport: AsyncHTTPClient on Linux, URLSession on Apple's.
#if os(Linux)
let platformTransport = "asynchttpclient"
#else
let platformTransport = "urlsession"
#endif
guard arguments[1] == platformTransport else {
    FileHandle.standardError.write(Data("transportbench: this platform's PkgKit has \(platformTransport) only\n".utf8))
    exit(64)
}
#if os(Linux)
let transport: any HTTPTransport = AsyncHTTPClientTransport()
#else
let transport: any HTTPTransport = URLSessionTransport()
#endif
let url = URL(string: arguments[2])!
guard FileManager.default.createFile(atPath: arguments[3], contents: nil) else { fatalError("cannot create \(arguments[3])") }
let output = try FileHandle(forWritingTo: URL(fileURLWithPath: arguments[3]))
let pause = option("--slow-reader").map { UInt32($0 * 1000) }
let policy = TransferPolicy(idleTimeout: .milliseconds(Int64((option("--timeout") ?? 30) * 1000)))
let start = Date()
do {
    _ = try await transport.get(HTTPRequest(url: url, maximumBodyBytes: limit), policy: policy, onResponse: { _ in }, onBody: { chunk in
        output.write(chunk)
        if let pause { usleep(pause) }
    })
    try output.close()
    print("ok \(String(format: "%.3f", Date().timeIntervalSince(start)))")
} catch {
    print("error \(String(format: "%.3f", Date().timeIntervalSince(start))) \(error)")
    exit(1)
}
