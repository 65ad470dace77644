import Foundation

/// The offline gazetteer (Data/gazetteer.db, see docs/DATA.md): GeoNames places of 1,000
/// people or more with their Latin and Cyrillic names, U.S. ZIP codes with their centroids,
/// countries and first-level divisions, all matched on names folded by `Text.fold`.
///
/// It is an indexed read-only SQLite file, so a process that asks one question reads a few
/// pages of it, never the whole.
///
/// An address is read from its end: a ZIP code, a state or a country there are **binding**
/// qualifiers ("Stowe, VT" is only ever a place in Vermont; "Hanford, VT" is nobody), and the
/// part before them is the place's name. Earlier parts are street and house and are never
/// matched, nor are the words up to the last number of a part that also holds the town
/// ("350 Fifth Avenue New York NY"). A name that several places share gives all of them,
/// ranked: places in the countries the directory has clinics in first, then the larger, then
/// the smaller id.
public final class Gazetteer: Sendable {
    public struct Place: Sendable, Equatable {
        public let id: Int64
        public let name: String
        /// ISO 3166 alpha-2.
        public let country: String
        /// First-level division code; for the United States the state's postal code ("IN").
        public let admin1: String
        /// Its name ("Indiana", "Île-de-France"); empty when unknown.
        public let admin1Name: String
        public let population: Int
        public let coordinate: Coordinate
        /// For a ZIP code match, the code; the place is then the ZIP's centroid and town.
        public let postcode: String?

        /// "Vincennes, Indiana, US"; "Boston, MA 02115, US" for a ZIP code.
        public var displayName: String {
            if let postcode { return "\(name), \(admin1) \(postcode), \(country)" }
            return ([name] + (admin1Name.isEmpty ? [] : [admin1Name]) + [country]).joined(separator: ", ")
        }

        public var precision: String { postcode == nil ? "city" : "postcode" }

        /// What to type for this place and no other among `others`: "Vincennes, IN" in the
        /// U.S., "Vincennes, FR" elsewhere, with the division's name when the country has two
        /// ("Springfield, Île-de-France, FR"); the code for a ZIP code. (Places that share a
        /// name and a state get their ZIP code from `Gazetteer.hints`.)
        public func hint(among others: [Place]) -> String {
            if let postcode { return postcode }
            if country == "US" { return "\(name), \(admin1)" }
            let twins = others.contains { $0.id != id && $0.country == country }
            return twins && !admin1Name.isEmpty ? "\(name), \(admin1Name), \(country)" : "\(name), \(country)"
        }
    }

    /// What the gazetteer makes of an address.
    public struct Answer: Sendable, Equatable {
        /// Best first; empty when it knows no such place.
        public var places: [Place]
        /// With no place: a close spelling in the state or country the address named.
        public var suggestion: Place?
    }

    let file: DataFile

    init(file path: String) throws {
        file = try DataFile(path: path)
        _ = try read { db in try db.value(Int.self, "SELECT count(*) FROM place WHERE id = 0") }
    }

    private static let loaded = LockedBox<[String: Gazetteer]>([:])

    /// The gazetteer of a Data/ folder, opened once per process.
    public static func load(from data: URL) throws -> Gazetteer {
        try DataFile.shared(loaded, data.appendingPathComponent("gazetteer.db").path, Gazetteer.init(file:))
    }

    func read<T>(_ body: (DataFile) throws -> T) throws -> T { try body(file) }

    // MARK: Reading an address

    /// One reading of a qualifier: a country, or a first-level division of one.
    struct Region: Hashable, Sendable {
        let country: String
        let admin1: String?

        func contains(country: String, admin1: String) -> Bool {
            self.country == country && (self.admin1 == nil || self.admin1 == admin1)
        }
    }

    /// What an address says besides the place's name: each qualifier is the set of regions it
    /// can mean ("Georgia" is a state and a country), and a place must lie in one region of
    /// every qualifier.
    public struct Qualifiers: Equatable, Sendable {
        var regions: [Set<Region>] = []
        var postcode: String?

        var isEmpty: Bool { regions.isEmpty }

        func admit(country: String, admin1: String) -> Bool {
            regions.allSatisfy { options in options.contains { $0.contains(country: country, admin1: admin1) } }
        }
    }

    /// The regions a folded text names: a country (name or ISO code), or a first-level
    /// division (a U.S. state's name or postal code, another country's division by name).
    func regions(_ text: String) throws -> Set<Region> {
        try read { db in
            var found = Set<Region>()
            for row in try db.rows("SELECT country, code FROM admin1_key WHERE key = ?", [text]) {
                found.insert(Region(country: try row.decode(String.self, forColumn: "country"),
                                    admin1: try row.decode(String.self, forColumn: "code")))
            }
            if let iso = try db.value(String.self, "SELECT iso FROM country_key WHERE key = ?", [text]) {
                found.insert(Region(country: iso, admin1: nil))
            }
            return found
        }
    }

    static func digits(_ word: Substring, _ count: Int) -> Bool {
        word.count == count && word.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// How many of the last folded words are a ZIP code: 1 for "02115", 2 for "02115 1234"
    /// (ZIP+4, whose hyphen folding made a space); 0 for none.
    static func postcodeLength(_ words: [Substring]) -> Int {
        guard let last = words.last else { return 0 }
        if digits(last, 5) { return 1 }
        if digits(last, 4), words.count >= 2, digits(words[words.count - 2], 5) { return 2 }
        return 0
    }

    /// Takes a ZIP code, a state or a country off the end of a folded part ("ma 02115",
    /// "hanford ca"); returns the words left, or nil when the last word is no qualifier.
    func absorbLast(_ words: [Substring], into qualifiers: inout Qualifiers) throws -> [Substring]? {
        let zip = Self.postcodeLength(words)
        if zip > 0 {
            if qualifiers.postcode == nil { qualifiers.postcode = String(words[words.count - zip]) }
            return Array(words.dropLast(zip))
        }
        // Two-word regions first ("new york", "rhode island", "ile de france" needs three).
        for length in stride(from: min(3, words.count), through: 1, by: -1) {
            let text = words.suffix(length).joined(separator: " ")
            let found = try regions(text)
            if !found.isEmpty {
                qualifiers.regions.append(found)
                return Array(words.dropLast(length))
            }
        }
        return nil
    }

    /// The folded name part of an address and the qualifiers around it: parts after the last
    /// that is not a qualifier are qualifiers, and so are trailing words of that part when it
    /// has others ("hanford ca", "los angeles ca 90001", "boston ma 02115").
    public func nameAndQualifiers(_ address: String) throws -> (name: String, qualifiers: Qualifiers)? {
        let parts = address.split(separator: ",").map { Text.fold(String($0)) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }
        // Whole parts at the end that are qualifiers ("…, CA", "…, MA 02115", "…, Belarus"):
        // one reading for each part taken off (the first part never is), as many parts kept.
        var readings: [(kept: Int, qualifiers: Qualifiers)] = []
        var qualifiers = Qualifiers()
        var kept = parts.count
        while kept > 1 {
            var attempt = qualifiers
            var rest = parts[kept - 1].split(separator: " ")
            while !rest.isEmpty, let remaining = try absorbLast(rest, into: &attempt) { rest = remaining }
            guard rest.isEmpty else { break }
            qualifiers = attempt
            kept -= 1
            readings.append((kept, qualifiers))
        }
        if readings.isEmpty { readings = [(parts.count, qualifiers)] }
        // The most taken off, unless what it leaves names no place there and a reading that took
        // fewer does: a city named like a state is the name when a street comes before it
        // ("1600 Pennsylvania Ave NW, Washington, DC", "350 Fifth Avenue, New York, NY").
        var fallback: (name: String, qualifiers: Qualifiers)?
        for reading in readings.reversed() {
            let found = try nameInPart(parts[reading.kept - 1], alone: reading.kept == 1, reading.qualifiers)
            if try names(found.name, found.qualifiers) { return found }
            fallback = fallback ?? found
        }
        // A street, then a city that is a division of its own name ("ул. Ленина 5, Минск",
        // "Unter den Linden 1, Berlin", "1600 Pennsylvania Ave NW, DC"): the last part is the
        // city, in that division. Only after a street: "Qwertyuiopville, DC" is nobody.
        if let division = readings.first, division.kept == parts.count - 1, parts[division.kept - 1].contains(where: \.isNumber),
           let city = parts.last, try hasPlace(city, division.qualifiers) {
            return (city, division.qualifiers)
        }
        return fallback
    }

    /// The name in the last part an address keeps, with the qualifiers at its end.
    func nameInPart(_ part: String, alone: Bool, _ qualifiers: Qualifiers) throws -> (name: String, qualifiers: Qualifiers) {
        var qualifiers = qualifiers
        let words = part.split(separator: " ")
        // A lone ZIP code.
        if alone, Self.postcodeLength(words) == words.count, let code = words.first {
            qualifiers.postcode = qualifiers.postcode ?? String(code)
            return ("", qualifiers)
        }
        // Qualifiers at the end of the name part ("hanford ca", "los angeles ca 90001"): the
        // first reading, from the words as typed to the most taken off, whose words name a
        // place ("green bay" is Green Bay, not "green" in the Somali region of Bay); if none
        // does, the one with the most taken off.
        var readings: [(words: [Substring], qualifiers: Qualifiers)] = [(words, qualifiers)]
        var attempt = qualifiers, rest = words
        while rest.count > 1, let remaining = try absorbLast(rest, into: &attempt), !remaining.isEmpty {
            rest = remaining
            readings.append((rest, attempt))
        }
        if let named = try readings.first(where: { try !placeIds($0.words.joined(separator: " ")).isEmpty }) {
            return (named.words.joined(separator: " "), named.qualifiers)
        }
        // A street before the town with no comma between ("350 fifth avenue new york ny"): the
        // town is a run of words after the last number (the house's, a unit's) and before words
        // that are all qualifiers, and names a place where they say. Every such cut is tried, the
        // most taken off first, since a state may be read with the town ("washington dc") or
        // apart ("dc"); and the longest run first ("new york", not "york"), of at most five words
        // (the longest town names), so that a long line costs a bounded number of look-ups. Never
        // without qualifiers: a state's code that is also a place's name ("pa", "or") would be the town.
        for cut in stride(from: 1, to: words.count, by: 1) {
            guard let number = words[..<cut].lastIndex(where: { $0.contains(where: \.isNumber) }), number + 1 < cut else { continue }
            var tail = qualifiers, rest = Array(words[cut...])
            while !rest.isEmpty, let remaining = try absorbLast(rest, into: &tail) { rest = remaining }
            guard rest.isEmpty, !tail.isEmpty else { continue }
            for start in max(number + 1, cut - 5)..<cut {
                let name = words[start..<cut].joined(separator: " ")
                if try hasPlace(name, tail) { return (name, tail) }
            }
        }
        guard let last = readings.last else { return (words.joined(separator: " "), qualifiers) }
        return (last.words.joined(separator: " "), last.qualifiers)
    }

    /// Whether a reading finds something: a known ZIP code in the qualifiers' region, or a place
    /// of that name there.
    func names(_ name: String, _ qualifiers: Qualifiers) throws -> Bool {
        try postcode(in: qualifiers) != nil || hasPlace(name, qualifiers)
    }

    /// The qualifiers' ZIP code when it is known and lies in their region: it answers alone.
    func postcode(in qualifiers: Qualifiers) throws -> Place? {
        guard let code = qualifiers.postcode, let place = try postcode(code),
              qualifiers.admit(country: place.country, admin1: place.admin1) else { return nil }
        return place
    }

    /// Whether a place of that name lies in the qualifiers' region.
    func hasPlace(_ name: String, _ qualifiers: Qualifiers) throws -> Bool {
        guard !name.isEmpty else { return false }
        return try places(key: name).contains { qualifiers.admit(country: $0.country, admin1: $0.admin1) }
    }

    func placeIds(_ key: String) throws -> [Int64] {
        try read { db in try db.values(Int64.self, "SELECT place_id FROM place_key WHERE key = ?", [key]) }
    }

    // MARK: Look-up

    /// The places an address names, best first. Places whose own name it is replace places
    /// known by it as another name; among them, those in `preferredCountries` (where the
    /// directory has clinics) come first, then the larger. A name known only as another name
    /// ("Москва") is ranked by population alone: the script it is typed in says more about
    /// the place meant than where the directory is. A ZIP code that is known, and lies in the
    /// qualifiers' region, answers alone.
    public func lookup(_ address: String, preferredCountries: Set<String> = []) throws -> Answer {
        try lookup(address, preferring: { preferredCountries })
    }

    /// `lookup` with the preferred countries asked for only when places of several countries
    /// share the name (finding them reads the directory).
    public func lookup(_ address: String, preferring preferredCountries: () throws -> Set<String>) throws -> Answer {
        guard let (name, qualifiers) = try nameAndQualifiers(address) else { return Answer(places: []) }
        if let place = try postcode(in: qualifiers) { return Answer(places: [place]) }
        guard !name.isEmpty else { return Answer(places: []) }
        var places = try self.places(key: name).filter { qualifiers.admit(country: $0.country, admin1: $0.admin1) }
        // Places whose own name it is come before, and instead of, places that have it as
        // another name ("Birmingham" is not Cartersville, Georgia, whatever it was once called).
        let named = places.filter { Text.fold($0.name) == name }
        if !named.isEmpty { places = named }
        if !places.isEmpty {
            let countries = Set(places.map(\.country))
            let preferred = named.isEmpty || countries.count < 2 ? [] : try preferredCountries()
            return Answer(places: places.sorted { rank($0, preferred) > rank($1, preferred) })
        }
        return Answer(places: [], suggestion: qualifiers.isEmpty ? nil : try suggestion(for: name, in: qualifiers))
    }

    func rank(_ place: Place, _ preferred: Set<String>) -> (Int, Int, Int64) {
        (preferred.contains(place.country) ? 1 : 0, place.population, -place.id)
    }

    static let placeColumns = "p.id, p.name, p.country, p.admin1, p.admin1_name, p.population, p.lat, p.lon"

    static func place(_ row: StoredRowValues, postcode: String? = nil) throws -> Place? {
        guard let coordinate = Coordinate(latitude: try row.decode(Double.self, forColumn: "lat"),
                                          longitude: try row.decode(Double.self, forColumn: "lon")) else { return nil }
        return Place(id: try row.decode(Int64.self, forColumn: "id"), name: try row.decode(String.self, forColumn: "name"),
                     country: try row.decode(String.self, forColumn: "country"),
                     admin1: try row.decode(String.self, forColumn: "admin1"),
                     admin1Name: try row.decode(String.self, forColumn: "admin1_name"),
                     population: try row.decode(Int.self, forColumn: "population"), coordinate: coordinate, postcode: postcode)
    }

    func places(key: String) throws -> [Place] {
        try read { db in
            try db.rows("""
                SELECT \(Self.placeColumns) FROM place_key k JOIN place p ON p.id = k.place_id WHERE k.key = ?
                """, [key]).compactMap { try Self.place($0) }
        }
    }

    /// What to type for each of `places` and no other: `Place.hint`, and where that is not
    /// enough (three Georgetowns in Indiana), the town and its nearest ZIP code in its state
    /// ("Georgetown, IN 47122"), which reads as the ZIP code's centroid.
    public func hints(_ places: [Place]) throws -> [String] {
        let plain = places.map { $0.hint(among: places) }
        var counts: [String: Int] = [:]
        for hint in plain { counts[hint, default: 0] += 1 }
        return try zip(places, plain).map { place, hint in
            guard counts[hint, default: 0] > 1, place.postcode == nil, let code = try nearestPostcode(place) else { return hint }
            return "\(place.name), \(place.admin1) \(code)"
        }
    }

    /// The ZIP code of the place's state whose centroid is nearest to it (within about 50 km).
    func nearestPostcode(_ place: Place) throws -> String? {
        let point = place.coordinate
        let rows = try read { db in
            try db.rows("""
                SELECT code, lat, lon FROM postcode WHERE admin1 = ? AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?
                """, [place.admin1, point.latitude - 0.5, point.latitude + 0.5, point.longitude - 0.7, point.longitude + 0.7])
        }
        var best: (distance: Double, code: String)?
        for row in rows {
            guard let centroid = Coordinate(latitude: try row.decode(Double.self, forColumn: "lat"),
                                            longitude: try row.decode(Double.self, forColumn: "lon")) else { continue }
            let code = try row.decode(String.self, forColumn: "code")
            let distance = Geodesy.distance(point, centroid)
            if best.map({ (distance, code) < ($0.distance, $0.code) }) ?? true { best = (distance, code) }
        }
        return best?.code
    }

    /// A U.S. ZIP code's centroid and town.
    public func postcode(_ code: String) throws -> Place? {
        try read { db in
            guard let row = try db.row("""
                SELECT 0 AS id, z.place AS name, z.country, z.admin1, coalesce(a.name, '') AS admin1_name, 0 AS population,
                       z.lat, z.lon
                FROM postcode z LEFT JOIN admin1 a ON a.country = z.country AND a.code = z.admin1
                WHERE z.country = 'US' AND z.code = ?
                """, [code]) else { return nil }
            return try Self.place(row, postcode: code)
        }
    }

    /// The place in the qualifiers' region whose name is closest to `name` (at most two edits,
    /// one for names of up to four letters), the larger on a tie; nil when none is that close.
    func suggestion(for name: String, in qualifiers: Qualifiers) throws -> Place? {
        let regions = qualifiers.regions.first ?? []
        let limit = name.count <= 4 ? 1 : 2
        var best: (distance: Int, population: Int, place: Place)?
        for region in regions {
            let rows = try read { db in
                try db.rows("""
                    SELECT k.key, \(Self.placeColumns) FROM place p JOIN place_key k ON k.place_id = p.id
                    WHERE p.country = ? AND (? IS NULL OR p.admin1 = ?)
                    """, [region.country, region.admin1, region.admin1])
            }
            for row in rows {
                let key = try row.decode(String.self, forColumn: "key")
                guard abs(key.count - name.count) <= limit, let distance = Self.editDistance(name, key, limit: limit),
                      let place = try Self.place(row), qualifiers.admit(country: place.country, admin1: place.admin1)
                else { continue }
                if best.map({ (distance, -place.population) < ($0.distance, -$0.population) }) ?? true {
                    best = (distance, place.population, place)
                }
            }
        }
        return best?.place
    }

    /// Levenshtein distance, nil when it is over `limit`.
    static func editDistance(_ a: String, _ b: String, limit: Int) -> Int? {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            var rowMinimum = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return nil }
            previous = current
        }
        let distance = a.isEmpty ? b.count : previous[b.count]
        return distance <= limit ? distance : nil
    }

    /// The country a clinic's `state` code means: a U.S. state's code means the U.S.; the
    /// territories' codes (PR, GU, VI, AS, MP, PW) are ISO country codes.
    public func country(ofState code: String) throws -> String? {
        let folded = Text.fold(code)
        return try read { db in
            if try db.value(Bool.self, "SELECT EXISTS (SELECT 1 FROM admin1_key WHERE key = ? AND country = 'US' AND length(key) = 2)",
                                 [folded]) == true { return "US" }
            return try db.value(String.self, "SELECT iso FROM country_key WHERE key = ? AND length(key) = 2", [folded])
        }
    }
}
