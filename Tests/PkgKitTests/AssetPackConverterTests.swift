import Foundation
import Synchronization
import Testing
import TestSupport
@testable import PkgKit

/// The converter as a library: manifest bytes, pack IDs, and an interrupted conversion.
@Suite struct AssetPackConverterTests {
    /// Letters, digits and inner hyphens only (ITMS-91133): every other character a `-`, runs
    /// of them one, none at either end.
    @Test func packIDs() {
        #expect(AssetPackID.make(fromProductIdentifier: "com.example.book.chapter1") == "com-example-book-chapter1")
        #expect(AssetPackID.make(fromProductIdentifier: "com.example.my_book__2") == "com-example-my-book-2")
        #expect(AssetPackID.make(fromProductIdentifier: "_internal._pack_.") == "internal-pack")
        #expect(AssetPackID.make(fromProductIdentifier: "Plain") == "Plain")
        #expect(AssetPackID.make(fromProductIdentifier: "A1.b2_C3") == "A1-b2-C3")
        #expect(AssetPackID.make(fromProductIdentifier: "_._") == "")
        #expect(AssetPackID.make(fromProductIdentifier: "caf\u{E9}.x") == "caf-x", "letters outside ASCII are not letters to App Store Connect")
    }

    /// The exact bytes: keys in §8's order, two-space indentation, a final newline.
    @Test func manifestBytes() {
        let onDemand = AssetPackManifest(assetPackID: "com-example-book").jsonText()
        #expect(onDemand == """
            {
              "assetPackID": "com-example-book",
              "downloadPolicy": {
                "onDemand": {}
              },
              "fileSelectors": [
                {
                  "directory": "com-example-book"
                }
              ],
              "platforms": [
                "iOS"
              ]
            }

            """)
        let prefetch = AssetPackManifest(assetPackID: "x", downloadPolicy: .prefetch, platforms: [.iOS, .macOS]).jsonText()
        #expect(prefetch.contains("""
              "downloadPolicy": {
                "prefetch": {
                  "installationEventTypes": [
                    "firstInstallation",
                    "subsequentUpdate"
                  ]
                }
              },
            """))
        #expect(prefetch.contains("\"platforms\": [\n    \"iOS\",\n    \"macOS\"\n  ]"))
        for text in [onDemand, prefetch] {
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "not JSON:\n\(text)")
        }
    }

    @Test func platformNamesAndOrder() {
        #expect(AssetPackPlatform(rawValue: "iOS") == .iOS)
        #expect(AssetPackPlatform(rawValue: "ios") == nil, "spelt exactly as Apple spells it")
        #expect(AssetPackPlatform(rawValue: "watchOS") == nil)
        #expect(AssetPackPlatform.canonical([.visionOS, .iOS, .visionOS]) == [.iOS, .visionOS])
        #expect(ConvertOptions(platforms: []).manifestPlatforms == [.iOS])
    }

    /// Cancelled in the middle of staging a pack: nothing in the output folder changes and
    /// nothing staged is left.
    @Test func cancelledWhileStagingChangesNothing() throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.book", version: "2.0", files: ["a.txt": "two", "b.txt": "two"])
        try s.write("out/com-example-book/Contents/a.txt", "one")
        try s.write("out/com-example-book.json", "{}")
        let before = snapshot(s.path("out"))
        let cancellation = Cancellation()
        let progressCalls = Atomic<Int>(0)
        // Set part-way through the full pass, from its progress: the next check stops the read.
        let options = ConvertOptions(progress: { _, _ in
            if progressCalls.add(1, ordering: .relaxed).newValue == 1 { cancellation.cancel() }
        }, cancellation: cancellation)
        #expect(throws: OperationCancelled.self) {
            try AssetPackConverter(output: s.path("out")).convert([source], options: options)
        }
        #expect(progressCalls.load(ordering: .relaxed) >= 1)
        #expect(snapshot(s.path("out")) == before)
    }

    /// Convert refuses what validate only warns of: two names a Mac's disk would merge.
    @Test func caseCollisionIsAnErrorForConvert() throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.book", version: "1.0", files: ["Level.json": "1", "level.json": "2"])
        let report = try AssetPackConverter(output: s.path("out")).convert([source])
        #expect(report.status == .refused)
        let collision = report.packages.first?.diagnostics.first { $0.code == .caseCollision }
        #expect(collision?.severity == .error)
        #expect(report.packages.first?.valid == false)
        #expect(!FileManager.default.fileExists(atPath: s.path("out")))
        let validated = try PackageCheck.run(source, context: RuleContext(purpose: .validate))
        #expect(validated.diagnostics.first { $0.code == .caseCollision }?.severity == .warning)
        #expect(validated.isValid())
    }

    /// The report's table lines up its columns.
    @Test func tableColumns() {
        let pack = { (id: String, version: String) in
            ConvertedPack(productIdentifier: id, contentVersion: version, assetPackID: AssetPackID.make(fromProductIdentifier: id),
                          manifest: "", directory: "", package: "")
        }
        let report = ConvertReport(status: .converted, packs: [pack("com.a", "1.0"), pack("com.example.long", "10.2.3")])
        #expect(report.table == [
            "product           version  asset pack ID",
            "com.a             1.0      com-a",
            "com.example.long  10.2.3   com-example-long",
        ])
        #expect(report.commands == ["xcrun ba-package com-a.json -o com-a.aar",
                                    "xcrun ba-package com-example-long.json -o com-example-long.aar"])
    }
}
