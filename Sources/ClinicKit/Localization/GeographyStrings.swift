import Foundation

/// Geography: places, coordinates, geocoders.
extension Strings {
    static let geographyEN: [MessageKey: String] = [
        .geocodeSuggestion: "Cannot find '{0}'. Did you mean {1}? Type '{2}'.",
        .whichPlace: "Which {0}?",
        .cityInvalid: "The city must be 1 to 100 letters, spaces, hyphens, apostrophes or dots, optionally with ', State' or ', Country' and a ZIP code.",
        .gazetteerMissing: "The data file {0} is missing. Restore Data/ from the project, or set CLINIC_RESOURCES.",
        .geocoderSetting: "{0} is not valid ('{1}'): give an http(s) URL for the geocoder, and a timeout in seconds from 0 to 60.",
        .coordinatesInvalid: "Cannot read the coordinates '{0}'. Write them like 53.9,27.56 or 53.9N 27.56E.",
        .coordinatesOutOfRange: "The coordinates '{0}' are out of range: latitude must be within ±90, longitude within ±180.",
        .addressInvalid: "The address must be 1 to 300 characters without control characters.",
        .geocodeFailed: "Cannot find '{0}': no known city matches. Try 'City, State' or 'City, Country', or give coordinates.",
        .geocoderUnavailable: "The geocoder at {0} did not answer.",
        .geocoderBadAnswer: "The geocoder's answer cannot be read.",
        .geocoderTimeout: "The geocoder at {0} did not answer within {1} s.",
        .locationChoice: "Give exactly one location: coordinates, an address, or your own address.",
        .noHomeCoordinates: "Your profile has no coordinates: give an address or coordinates.",
        .radiusInvalid: "The radius must be a number of kilometres of 0 or more (got {0}).",
        .limitBetween: "The limit must be from {1} to {2} (got {0}).",
    ]

    static let geographyRU: [MessageKey: String] = [
        .geocodeSuggestion: "Не удаётся найти '{0}'. Может быть, {1}? Введите '{2}'.",
        .whichPlace: "Какой именно {0}?",
        .cityInvalid: "Город — от 1 до 100 букв, пробелов, дефисов, апострофов или точек, можно с ', Штат' или ', Страна' и почтовым индексом США.",
        .gazetteerMissing: "Нет файла данных {0}. Восстановите Data/ из проекта или задайте CLINIC_RESOURCES.",
        .geocoderSetting: "{0} задан неверно ('{1}'): нужен http(s)-адрес геокодера и время ожидания от 0 до 60 секунд.",
        .coordinatesInvalid: "Не удаётся прочитать координаты '{0}'. Пишите так: 53.9,27.56 или 53.9N 27.56E.",
        .coordinatesOutOfRange: "Координаты '{0}' вне допустимых пределов: широта ±90, долгота ±180.",
        .addressInvalid: "Адрес — от 1 до 300 символов без управляющих символов.",
        .geocodeFailed: "Не удаётся найти '{0}': ни один известный город не подходит. Попробуйте 'Город, Страна' или укажите координаты.",
        .geocoderUnavailable: "Геокодер {0} не ответил.",
        .geocoderBadAnswer: "Не удаётся прочитать ответ геокодера.",
        .geocoderTimeout: "Геокодер {0} не ответил за {1} с.",
        .locationChoice: "Укажите ровно одно место: координаты, адрес или ваш собственный адрес.",
        .noHomeCoordinates: "В вашем профиле нет координат: укажите адрес или координаты.",
        .radiusInvalid: "Радиус — число километров, 0 или больше (получено {0}).",
        .limitBetween: "Лимит — от {1} до {2} (получено {0}).",
    ]
}
