import Foundation

/// The offline gazetteer: GeoNames places of 15,000 people or more (Data/gazetteer.tsv, see
/// docs/DATA.md), matched on names folded by `Text.fold`, in Latin and Cyrillic script.
public final class Gazetteer: Sendable {
    public struct Place: Sendable, Equatable {
        public let id: Int64
        public let name: String
        /// ISO 3166 alpha-2.
        public let country: String
        /// First-level division; for the United States the state's postal code ("CA").
        public let admin1: String
        public let population: Int
        public let timeZone: String
        public let coordinate: Coordinate
    }

    public let places: [Place]
    let byKey: [String: [Int32]]
    /// Folded country names and ISO codes → alpha-2.
    let countries: [String: String]
    /// Folded U.S. state names and codes → code.
    let states: [String: String]
    private let spatial = LockedBox<GeoIndex?>(nil)

    init(places: [Place], keys: [[String]], countries: [String: String], states: [String: String]) {
        self.places = places
        var byKey: [String: [Int32]] = [:]
        byKey.reserveCapacity(places.count * 6)
        for (index, names) in keys.enumerated() {
            for key in names where !key.isEmpty { byKey[key, default: []].append(Int32(index)) }
        }
        self.byKey = byKey
        self.countries = countries
        self.states = states
    }

    private static let loaded = LockedBox<[String: Gazetteer]>([:])

    /// The gazetteer of a Data/ folder, read once per process.
    public static func load(from data: URL) throws -> Gazetteer {
        try loaded.withLock { cache in
            if let gazetteer = cache[data.path] { return gazetteer }
            let gazetteer = try read(from: data)
            cache[data.path] = gazetteer
            return gazetteer
        }
    }

    static func lines(_ url: URL) throws -> [Substring] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ClinicError(.storage, .gazetteerMissing, url.path)
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst().map { $0 }
    }

    static func read(from data: URL) throws -> Gazetteer {
        var places: [Place] = [], keys: [[String]] = []
        for line in try lines(data.appendingPathComponent("gazetteer.tsv")) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 9, let id = Int64(fields[0]), let population = Int(fields[4]),
                  let lat = Double(fields[6]), let lon = Double(fields[7]),
                  let coordinate = Coordinate(latitude: lat, longitude: lon) else { continue }
            places.append(Place(id: id, name: String(fields[1]), country: String(fields[2]), admin1: String(fields[3]),
                                population: population, timeZone: String(fields[5]), coordinate: coordinate))
            keys.append(fields[8].split(separator: "|").map(String.init))
        }
        var countries: [String: String] = [:]
        for line in try lines(data.appendingPathComponent("countries.tsv")) {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 3 else { continue }
            for name in fields { countries[Text.fold(name)] = fields[0] }
        }
        for (name, code) in [("usa", "US"), ("united states of america", "US"), ("россия", "RU"), ("беларусь", "BY"),
                             ("украина", "UA"), ("казахстан", "KZ"), ("сша", "US"), ("uk", "GB"), ("great britain", "GB")] {
            countries[Text.fold(name)] = code
        }
        var states: [String: String] = [:]
        for line in try lines(data.appendingPathComponent("us-states.tsv")) {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 2 else { continue }
            states[Text.fold(fields[0])] = fields[0]
            states[Text.fold(fields[1])] = fields[0]
        }
        return Gazetteer(places: places, keys: keys, countries: countries, states: states)
    }

    // MARK: Look-up

    /// What an address says besides the place's name.
    struct Qualifiers: Equatable {
        var country: String?
        var admin1: String?
    }

    /// The place an address names: the part before its country and state, read as a city
    /// ("1025 North Douty Street, Hanford, CA" → Hanford). Earlier parts are street and house
    /// and are never matched, so a street named like a town cannot stand in for the city.
    /// Among places of the same name, those in the given country and state come first, then
    /// the larger.
    public func lookup(_ address: String) -> Place? {
        guard let (city, qualifiers) = Self.cityPart(address, absorbingWith: self) else { return nil }
        if let place = best(city, qualifiers) { return place }
        // "hanford ca", "minsk belarus", "los angeles ca 90001": qualifiers inside the part.
        var words = city.split(separator: " ").map(String.init)
        var inner = qualifiers
        while words.count > 1, let last = words.last, absorb(last, into: &inner) {
            words.removeLast()
            if let place = best(words.joined(separator: " "), inner) { return place }
        }
        return nil
    }

    /// The folded city part of an address and the qualifiers after it.
    static func cityPart(_ address: String, absorbingWith gazetteer: Gazetteer?) -> (String, Qualifiers)? {
        var parts = address.split(separator: ",").map { Text.fold(String($0)) }.filter { !$0.isEmpty }
        var qualifiers = Qualifiers()
        if let gazetteer {
            while parts.count > 1, let last = parts.last, gazetteer.absorb(last, into: &qualifiers) { parts.removeLast() }
        }
        guard let city = parts.last else { return nil }
        return (city, qualifiers)
    }

    /// Takes a country, a U.S. state or a ZIP code off the end of an address.
    func absorb(_ part: String, into qualifiers: inout Qualifiers) -> Bool {
        if part.allSatisfy({ $0.isNumber || $0 == " " }) { return true } // a ZIP code
        var words = part.split(separator: " ")
        if words.count > 1, words.last?.allSatisfy(\.isNumber) == true { words.removeLast() } // "ca 93230"
        let text = words.joined(separator: " ")
        if qualifiers.admin1 == nil, let state = states[text], qualifiers.country == nil || qualifiers.country == "US" {
            qualifiers.admin1 = state
            qualifiers.country = "US"
            return true
        }
        if qualifiers.country == nil, let country = countries[text] {
            qualifiers.country = country
            return true
        }
        return false
    }

    func best(_ key: String, _ qualifiers: Qualifiers) -> Place? {
        guard let candidates = byKey[key], !candidates.isEmpty else { return nil }
        return candidates.map { places[Int($0)] }.max { a, b in
            rank(a, qualifiers) < rank(b, qualifiers)
        }
    }

    func rank(_ place: Place, _ qualifiers: Qualifiers) -> (Int, Int, Int, Int64) {
        let countryMatch = qualifiers.country.map { $0 == place.country ? 1 : 0 } ?? 0
        let admin1Match = qualifiers.admin1.map { $0 == place.admin1 ? 1 : 0 } ?? 0
        // Larger first; among equals the smaller id, so the choice is stable.
        return (countryMatch, admin1Match, place.population, -place.id)
    }

    // MARK: Nearest place

    func spatialIndex() throws -> GeoIndex {
        try spatial.withLock { index in
            if let index { return index }
            let built = try GeoIndex(coordinates: places.map(\.coordinate), ids: places.map(\.id))
            index = built
            return built
        }
    }

    /// The nearest place, preferring the given country and first-level division.
    public func nearestPlace(to point: Coordinate, country: String? = nil, admin1: String? = nil) throws -> Place? {
        let index = try spatialIndex()
        let attempts: [(String?, String?)] = [(country, admin1), (country, nil), (nil, nil)]
        for (wantedCountry, wantedAdmin1) in attempts {
            if wantedAdmin1 != nil && wantedCountry == nil { continue }
            let hit = try index.nearest(to: point, k: 1) { position in
                let place = places[position]
                if let wantedCountry, place.country != wantedCountry { return false }
                if let wantedAdmin1, place.admin1 != wantedAdmin1 { return false }
                return true
            }.first
            if let hit { return places[hit.index] }
        }
        return nil
    }

    /// Farther than this, the nearest place says little about a clinic's zone (Adak, Alaska is
    /// 1,900 km from Anchorage, and an hour behind it).
    public static let zoneReach = 300_000.0

    /// A clinic's time zone: that of the nearest place in its U.S. state, or in the country its
    /// state code names (the territories' codes are ISO codes: PR, GU, VI, AS, MP, PW); nil
    /// when that place is farther than `zoneReach`.
    public func timeZone(at point: Coordinate, state: String) throws -> String? {
        let code = state.trimmingCharacters(in: .whitespaces).uppercased()
        let isState = states[Text.fold(code)] == code && code.count == 2
        let country: String? = isState ? "US" : (countries[Text.fold(code)] == code ? code : nil)
        guard let place = try nearestPlace(to: point, country: country, admin1: isState ? code : nil),
              Geodesy.distance(point, place.coordinate) <= Self.zoneReach,
              TimeZone(identifier: place.timeZone) != nil // a zone this system's tz database lacks is no use
        else { return nil }
        return place.timeZone
    }
}
