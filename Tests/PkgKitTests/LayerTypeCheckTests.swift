import Foundation
import Testing
import TestSupport

/// The compiler holds PkgKit to its layers (the table in `Sources/PkgKit/README.md`): each layer's
/// files are type-checked with only the files of the layers it may use beside them, with the
/// flags and imports of the debug build, so any reference to a layer above it fails to resolve:
/// a type, `Type.member`, an extension method, a conformance. And no object file of the build
/// calls `exit`: the command line alone picks an exit status. `LayeringTests` reads the sources
/// as text for the same table (quick, and it names the rule a file breaks); this is the proof.
@Suite(.offThePool, .timeLimit(.minutes(5))) struct LayerTypeCheckTests {
    static let moduleRoot = CommandRunner.packageRoot.appendingPathComponent("Sources/PkgKit").path

    @Test func everyLayerCompilesWithTheLayersBelowItAlone() throws {
        let check = try LayerTypeCheck(moduleRoot: Self.moduleRoot)
        #expect(check.layers.count >= 5, "the README's layer table was not found")
        let errors = try check.run(check.layers)
        #expect(errors.isEmpty, "layer violations (a layer uses one it may not):\n\(errors.joined(separator: "\n"))")
    }

    @Test func theLibrarysObjectsNeverCallExit() throws {
        let objects = CommandRunner.packageRoot.appendingPathComponent(".build/debug/PkgKit.build").path
        let files = try FileManager.default.contentsOfDirectory(atPath: objects).filter { $0.hasSuffix(".o") }.sorted()
        try #require(files.count > 50, "no debug build of PkgKit in \(objects)")
        let calls = try LayerTypeCheck.exitCalls(inObjects: files.map { objects + "/" + $0 })
        #expect(calls.isEmpty, "PkgKit calls exit (the command line picks exit statuses):\n\(calls.joined(separator: "\n"))")
    }

    /// Each kind of upward use the text search cannot see, planted in a copy of the module, fails
    /// the check with the file and what did not resolve; an `exit` shows in the object.
    @Test func plantedViolationsFailTheCheck() throws {
        let scratch = try Scratch()
        let copy = scratch.path("PkgKit")
        try FileManager.default.copyItem(atPath: Self.moduleRoot, toPath: copy)
        // A method that Sync's layer adds to a Format type.
        try scratch.write("PkgKit/Delivery/Sync/PlantedExtension.swift", """
            extension ContentVersion {
                func plantedSyncOnly() -> Int { 1 }
            }
            """)
        try scratch.write("PkgKit/Format/Model/PlantedUses.swift", """
            import Foundation

            func plantedUses() {
                _ = SyncPlan.make
                _ = Installer.self
                _ = ContentVersion("1.0")?.plantedSyncOnly()
            }
            """)
        let check = try LayerTypeCheck(moduleRoot: copy)
        let format = try #require(check.layers.first { $0.name == "Format" })
        let errors = try check.run([format])
        for expected in ["cannot find 'SyncPlan' in scope", "cannot find 'Installer' in scope", "has no member 'plantedSyncOnly'"] {
            #expect(errors.contains { $0.contains("Format/Model/PlantedUses.swift:") && $0.contains(expected) }, "\(expected) not found in:\n\(errors)")
        }
        #expect(errors.allSatisfy { $0.contains("PlantedUses.swift") }, "\(errors)")

        try scratch.write("PkgKit/Support/PlantedExit.swift", """
            import Foundation

            func plantedExit() { Foundation.exit(2) }
            """)
        let support = try #require(check.layers.first { $0.name == "Support" })
        let object = scratch.path("PlantedExit.o")
        try check.compile(copy + "/Support/PlantedExit.swift", of: support, to: object)
        #expect(try LayerTypeCheck.exitCalls(inObjects: [object]) == ["\(object): exit"])
    }
}

/// Type-checks PkgKit one layer at a time, with the debug build's own compiler flags.
struct LayerTypeCheck {
    /// One row of the README's layer table.
    struct Layer {
        var name: String
        var folder: String
        var mayUse: [String]

        /// The rows of the first table whose header starts `| layer | folder | may use |`.
        static func table(readme path: String) throws -> [Layer] {
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            guard let header = lines.firstIndex(where: { $0.hasPrefix("| layer | folder | may use |") }) else { return [] }
            return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                let uses = cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                return Layer(name: cells[1], folder: cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")), mayUse: uses)
            }
        }

        /// The layer whose folder holds `path` (the longest folder that is a prefix).
        static func owning(_ path: String, in layers: [Layer]) -> Layer? {
            layers.filter { path.hasPrefix($0.folder) }.max { $0.folder.count < $1.folder.count }
        }
    }

    let moduleRoot: String
    let layers: [Layer]
    /// Every Swift file of the module, relative to `moduleRoot`.
    let files: [String]
    let compiler: String
    /// The debug build's flags for PkgKit, less its sources and outputs.
    let flags: [String]

    init(moduleRoot: String) throws {
        self.moduleRoot = moduleRoot
        layers = try Layer.table(readme: moduleRoot + "/README.md")
        let enumerator = FileManager.default.enumerator(atPath: moduleRoot)
        files = (enumerator?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }.sorted()
        (compiler, flags) = try Self.buildFlags(plan: CommandRunner.packageRoot.appendingPathComponent(".build/debug.yaml").path)
    }

    /// The files of `layer` (those under its folder and under no longer listed folder).
    func files(of layer: Layer) -> [String] {
        files.filter { Layer.owning($0, in: layers)?.name == layer.name }.map { moduleRoot + "/" + $0 }
    }

    /// The files `layer` is compiled beside: those of the layers it may use.
    func filesBelow(_ layer: Layer) -> [String] {
        layers.filter { layer.mayUse.contains($0.name) }.flatMap(files(of:))
    }

    /// The compiler's errors for `layers`, two type-checks at a time: "file:line:column: message".
    func run(_ layers: [Layer]) throws -> [String] {
        let results = LayerResults()
        DispatchQueue.concurrentPerform(iterations: layers.count) { index in
            let layer = layers[index]
            results.set(index, Result { try frontend(["-typecheck"], primaries: files(of: layer), beside: filesBelow(layer)) })
        }
        return try (0..<layers.count).flatMap { try errors(results.get($0)) }
    }

    /// Compiles `file` to the object `output`, beside `layer`'s files and those below it.
    func compile(_ file: String, of layer: Layer, to output: String) throws {
        let result = try frontend(["-c", "-o", output], primaries: [file], beside: (files(of: layer) + filesBelow(layer)).filter { $0 != file })
        try #require(result.status == 0, "compiling \(file): \(result.stderr)")
    }

    /// The C library's ways to end the process that `objects` call: "object: symbol".
    static func exitCalls(inObjects objects: [String]) throws -> [String] {
        // -A puts the object's name before each symbol ("object: U exit"), one nm for them all.
        let symbols = try CommandRunner.run("/usr/bin/env", ["nm", "-u", "-A"] + objects)
        try #require(symbols.status == 0, "nm: \(symbols.stderr)")
        return symbols.stdout.split(separator: "\n").compactMap { line in
            guard let colon = line.range(of: ": "), let name = line.split(separator: " ").last,
                  ["exit", "_exit", "_Exit", "quick_exit"].contains(String(name)) else { return nil }
            return "\(line[..<colon.lowerBound]): \(name)"
        }
    }

    private func frontend(_ action: [String], primaries: [String], beside others: [String]) throws -> CommandResult {
        try CommandRunner.run(compiler, ["-frontend"] + action + primaries.flatMap { ["-primary-file", $0] } + others + flags)
    }

    /// The compiler's answers, by layer, as the type-checks running side by side end.
    private final class LayerResults: @unchecked Sendable {
        // @unchecked: `results` is only touched under `lock`.
        private let lock = NSLock()
        private var results: [Int: Result<CommandResult, Error>] = [:]
        func set(_ index: Int, _ result: Result<CommandResult, Error>) { lock.withLock { results[index] = result } }
        func get(_ index: Int) throws -> CommandResult { try lock.withLock { results[index]! }.get() }
    }

    private func errors(_ result: CommandResult) throws -> [String] {
        let errors = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }.map(String.init)
        try #require(result.status == 0 || !errors.isEmpty, "the compiler failed without an error:\n\(result.stderr)")
        return errors.map { $0.hasPrefix(moduleRoot + "/") ? String($0.dropFirst(moduleRoot.count + 1)) : $0 }
    }

    /// The compiler and PkgKit's flags as SwiftPM's build plan (`.build/debug.yaml`) gives them to
    /// the driver: module name, target, search paths, module maps and defines, without the
    /// sources, outputs and driver-only options.
    static func buildFlags(plan path: String) throws -> (compiler: String, flags: [String]) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let key = try #require(text.range(of: #"\"C\.PkgKit-[^"]*-debug\.module\":"#, options: .regularExpression), "no PkgKit in \(path)")
        let argsLine = try #require(text[key.upperBound...].range(of: "args: ["), "no args for PkgKit in \(path)")
        let line = text[argsLine.lowerBound...].prefix { $0 != "\n" }.dropFirst("args: ".count)
        let arguments = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String])
        let driverOnly: Set<String> = ["-emit-dependencies", "-emit-module", "-incremental", "-c", "-enable-batch-mode",
                                       "-serialize-diagnostics", "-parseable-output", "-emit-objc-header", "-g", "-enable-testing"]
        let withValue: Set<String> = ["-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path"]
        var flags: [String] = []
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            if argument == "-Xcc", let value = rest.popFirst() {
                flags += [argument, value]
            } else if withValue.contains(argument) {
                _ = rest.popFirst()
            } else if driverOnly.contains(argument) || argument.hasPrefix("@") || argument.hasPrefix("-j") || argument.hasSuffix(".swift") {
                continue
            } else if argument.hasPrefix("-D") || (argument.hasPrefix("-I") && argument.count > 2) {
                // The frontend takes these as two arguments.
                flags += [String(argument.prefix(2)), String(argument.dropFirst(2))]
            } else {
                flags.append(argument)
            }
        }
        return (try #require(arguments.first), flags)
    }
}
