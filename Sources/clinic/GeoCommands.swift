import ArgumentParser
import ClinicKit
import Foundation

/// Where to search from: exactly one of --lat/--lon, --at, --address or --me.
struct LocationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Latitude in degrees (with --lon).", valueName: "lat")) var lat: String?
    @Option(help: ArgumentHelp("Longitude in degrees (with --lat).", valueName: "lon")) var lon: String?
    @Option(help: ArgumentHelp("Coordinates in one string: \"53.9,27.56\", \"53.9N 27.56E\".", valueName: "lat,lon"))
    var at: String?
    @Option(help: ArgumentHelp("An address or place: \"Hanford, CA\", \"Минск\".", valueName: "text")) var address: String?
    @Flag(help: "The address you registered with.") var me = false

    /// Exactly one place: commands check it before they open the database. (Not the parser's
    /// `validate()`, which would wrap the `ClinicError` and lose its code.)
    func check() throws { _ = try choice() }

    func choice() throws -> PlaceChoice {
        try PlaceChoice.choose(latitude: lat, longitude: lon, at: at, address: address, home: me)
    }

    /// The signed-in patient, asked for only by `--me` (found before the search, awaited).
    func patient(_ context: Context, _ system: ClinicSystem) async throws -> () throws -> Client {
        guard me else { return { throw ClinicError(.notLoggedIn, .notLoggedIn) } }
        let client = try await context.awaitedPatient(system).client
        return { client }
    }
}

extension Clinics {
    struct Nearest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The clinics nearest to a point, an address or you, by great-circle distance.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var location: LocationOptions
        @Option(help: "How many clinics, 1 to 100 (default 1).") var limit: Int = 1
        @Flag(help: "Only pediatric clinics.") var pediatric = false
        @Flag(help: "Only hospitals.") var hospital = false
        @Option(help: "Only clinics with this department (English or Russian name).") var specialization: String?
        @Option(name: .customLong("within-km"), help: "Only clinics at most this many kilometres away.")
        var withinKm: Double?

        func run() async throws {
            let context = Context(global)
            let query = NearestQuery(limit: limit, pediatricOnly: pediatric, hospitalOnly: hospital,
                                     specialization: specialization, withinKilometres: withinKm)
            try query.validate() // before the database is opened or an address looked up
            try location.check()
            let system = try await context.awaitedSystem()
            let search = try await system.nearestClinics(from: try location.choice(), query, patient: try await location.patient(context, system))
            let found = search.found
            context.noteAmbiguity(search.geocoded)
            try context.emit(found.map(NearbyClinicJSON.init)) {
                guard !found.isEmpty else { return context.text(.nearestNone) }
                return Output.table(
                    [context.text(.headerId), context.text(.headerName), context.text(.headerCity),
                     context.text(.headerDistance), context.text(.headerKind)],
                    found.map { [String($0.clinic.id ?? 0), $0.clinic.name, $0.clinic.city,
                                 DistanceText.text($0.distance, context.language), kind($0.clinic, context)] })
            }
        }
    }
}

struct Geocode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the coordinates of an address or place (cache, offline gazetteer, directory, optional HTTP geocoder).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The address or place.") var text: String

    func run() async throws {
        let context = Context(global)
        let system = try await context.awaitedSystem()
        let result = try await system.geocoding.geocode(text, zones: true)
        try context.emit(GeocodeJSON(result)) {
            var lines = [context.text(.geocodeLine, result.placeName ?? result.query, String(format: "%.5f", result.coordinate.latitude),
                                      String(format: "%.5f", result.coordinate.longitude), result.precision,
                                      result.cached ? result.source + ", cache" : result.source)]
            if let zone = result.timeZone { lines[0] += " · " + zone }
            if result.isAmbiguous { lines.append(context.ambiguityText(result)) }
            return lines.joined(separator: "\n")
        }
    }
}

/// Clinics numbered for a choice, with their city, distance and kind (names give way first on
/// a narrow terminal).
func numberedClinicTable(_ nearby: [NearbyClinic], _ context: Context) -> String {
    Output.table(["#", context.text(.headerName), context.text(.headerCity), context.text(.headerDistance), context.text(.headerKind)],
                 nearby.enumerated().map { index, item in
                     [String(index + 1), item.clinic.name, item.clinic.city, DistanceText.text(item.distance, context.language),
                      kind(item.clinic, context)]
                 }, flexible: [1, 2])
}

