import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// Who is asking, resolved once per request by the middleware of the route's group, into the
// context: a route needs a patient or a staff member because of the group it is in, and its
// handler reads `context.signedInPatient()` / `context.signedInStaff()`.

/// The patient of the bearer token (`not_logged_in` without a live session); the language
/// becomes `Accept-Language`, else the patient's saved one. A use of the session is recorded
/// once the request succeeded (at most once a minute per token), unless `touches` is false —
/// the routes that end the session (log out, delete the account).
struct PatientAuthenticator: RouterMiddleware {
    typealias Context = APIContext
    let dependencies: ServerDependencies
    var touches = true

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let patient = try await dependencies.patient(request)
        var context = context
        context.patient = patient
        context.language = patient.language
        let response = try await inLanguage(context.language) { try await next(request, context) }
        if touches { await dependencies.touch(patient) }
        return response
    }
}

/// The staff member of the bearer token: `not_logged_in` (401) without a live staff session,
/// a patient's token included. The session is kept alive once the request succeeded (at most
/// a write a minute, as for patients), unless `touches` is false (log-out).
struct StaffAuthenticator: RouterMiddleware {
    typealias Context = APIContext
    let dependencies: ServerDependencies
    var touches = true

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let staff = try await dependencies.staffMember(request)
        var context = context
        context.staff = staff
        let response = try await next(request, context)
        if touches { await dependencies.touch(staff) }
        return response
    }
}

/// Runs a handler; an error it throws bare (`ClinicError`, `ServerError`) is said in `language`,
/// the one the group resolved (the patient's saved one where the request names none), so that
/// handlers throw the domain's errors as they are and never build a response for one.
func inLanguage(_ language: Language, _ body: () async throws -> Response) async throws -> Response {
    do {
        return try await body()
    } catch let error as ClinicError {
        throw APIFailure(error, language: language)
    } catch let error as ServerError {
        throw APIFailure(error, language: language)
    }
}
