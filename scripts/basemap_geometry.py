"""What scripts/derive-basemap.py and scripts/derive-basemap-detail.py share: reading a
shapefile's records, rounding coordinates, and moving Alaska's islands west of 180°."""
import shapefile
import shapely
from shapely.geometry import mapping, shape


def records(path):
    """(properties, geometry) of each record of a shapefile."""
    reader = shapefile.Reader(path)
    fields = [field[0] for field in reader.fields[1:]]
    for record in reader.iterShapeRecords():
        yield dict(zip(fields, record.record)), shape(record.shape.__geo_interface__)


def rounded(geometry, digits):
    """The geometry as GeoJSON, its coordinates rounded to `digits` decimals."""
    def walk(value):
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], (int, float)):
            return [round(value[0], digits), round(value[1], digits)]
        return [walk(item) for item in value]
    data = mapping(geometry)
    return {"type": data["type"], "coordinates": walk(data["coordinates"])}


def unwrap_alaska(geometry):
    """Alaska's islands past 180° (positive longitudes) moved west by 360°."""
    def west(coordinates):
        moved = coordinates.copy()
        moved[moved[:, 0] > 0, 0] -= 360
        return moved
    return shapely.transform(geometry, west)
