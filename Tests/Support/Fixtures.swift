import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An XML ContentInfo.plist.
public func plist(id: String, version: String, extra: String = "") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>ContentVersion</key>
    \t<string>\(version)</string>
    \t<key>IAPProductIdentifier</key>
    \t<string>\(id)</string>\(extra)
    </dict>
    </plist>

    """
}

/// The codes of the diagnostics in a JSON result (and in its `packages`).
public func codes(_ json: [String: Any]) -> Set<String> {
    var found: Set<String> = []
    for diagnostic in json["diagnostics"] as? [[String: Any]] ?? [] { if let code = diagnostic["code"] as? String { found.insert(code) } }
    for package in json["packages"] as? [[String: Any]] ?? [] { found.formUnion(codes(package)) }
    return found
}

/// `count` random bytes: content that does not compress.
public func randomData(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in 0..<words.count { words[i] = generator.next() }
        for i in (words.count * 8)..<count { raw[i] = UInt8.random(in: 0...255, using: &generator) }
    }
    return data
}

/// Runs `/usr/bin/bsdtar` with `arguments` (stderr discarded); returns its exit status.
@discardableResult
public func bsdtar(_ arguments: [String]) throws -> Int32 {
    try CommandRunner.run("/usr/bin/bsdtar", arguments).status
}

/// The ContentVersion and IAPProductIdentifier an install record names, nil when it does not parse.
public func readRecord(_ productFolder: String) -> (version: String, id: String)? {
    guard let data = FileManager.default.contents(atPath: productFolder + "/ContentInfo.plist"),
          let dict = (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) as? [String: Any],
          let version = dict["ContentVersion"] as? String, let id = dict["IAPProductIdentifier"] as? String else {
        return nil
    }
    return (version, id)
}

/// Staging folders left in a product folder.
public func stagingLeftovers(_ productFolder: String) -> [String] {
    names(productFolder).filter { $0.hasPrefix(".staging-") }
}

/// Free bytes of the file system holding `path`.
public func freeBytes(_ path: String) -> UInt64 {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return 0 }
    return UInt64(info.f_bavail) * UInt64(info.f_frsize)
}
