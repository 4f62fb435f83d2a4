/// The name a near miss was meant to be, for "did you mean …?" advice: a misspelt command, or a
/// ContentInfo.plist key spelt the way a widely copied tutorial spells it.
public enum NearestName {
    /// The candidate closest to `text`, when it is close enough to be what was meant: at most a
    /// third of the candidate's length in edits (1 to 3), case ignored. Ties go to the first.
    public static func suggestion(for text: String, among candidates: some Sequence<String>) -> String? {
        let typed = Array(text.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, Array(candidate.lowercased()))
            guard distance <= max(1, min(3, candidate.count / 3)) else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Up to `limit` of `candidates`, the nearest to `text` first (edit distance, case ignored;
    /// equally near ones in the order given), however far: what to list beside "there is no
    /// such name" when the candidates are few enough to show.
    public static func ranked(for text: String, among candidates: some Sequence<String>, limit: Int) -> [String] {
        guard limit > 0 else { return [] }
        let typed = Array(text.lowercased())
        var kept: [(name: String, distance: Int)] = []
        for candidate in candidates {
            // Once `limit` are kept, a candidate must be nearer than the farthest of them, so the
            // distance can stop being computed as soon as it cannot be: a catalog of many long
            // names costs little more than one of a few.
            let bound = kept.count < limit ? Int.max : kept[kept.count - 1].distance - 1
            let distance = editDistance(typed, Array(candidate.lowercased()), atMost: bound)
            guard distance <= bound else { continue }
            kept.insert((candidate, distance), at: kept.firstIndex { $0.distance > distance } ?? kept.count)
            if kept.count > limit { kept.removeLast() }
        }
        return kept.map(\.name)
    }

    /// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal
    /// string alignment distance, so that `craete` is one edit from `create`. Past `bound` the
    /// count stops early and is only some number above `bound`.
    package static func editDistance(_ a: [Character], _ b: [Character], atMost bound: Int = .max) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        if abs(a.count - b.count) > bound { return bound + 1 }
        var before = [Int](), previous = Array(0...b.count), current = [Int](repeating: 0, count: b.count + 1)
        var previousLeast = 0
        for i in 1...a.count {
            current[0] = i
            var least = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
                least = min(least, current[j])
            }
            // A row is at least the smaller of the row above and (by a swap) the one above that
            // plus one: two rows past the bound keep every later row past it.
            if least > bound && previousLeast > bound { return bound + 1 }
            previousLeast = least
            (before, previous, current) = (previous, current, before.isEmpty ? [Int](repeating: 0, count: b.count + 1) : before)
        }
        return previous[b.count]
    }
}
