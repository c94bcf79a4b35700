/* json_sink.c: the JSON half of the passes' reports, for libsgcap.so only.
 *
 * rewrite/ builds each pass's report twice: as text and as jansson values
 * (rewrite/pass.h). Offline (`sgcap rewrite`) both are wanted; inside the
 * application the optimizer reads only the text (a failing pass's reason),
 * and the shim links no JSON library an application could bring another
 * version of (docs/ARCHITECTURE.md). So libsgcap.so gets these definitions
 * of the jansson writer functions rewrite/ calls: every value is one
 * immortal JSON null (a refcount of (size_t)-1, which jansson's inline
 * json_incref/json_decref leave alone), every setter does nothing. Nothing
 * reads the values back in the app. A pass that calls another jansson
 * function makes the shim's link fail (--no-undefined) until it is added
 * here. Never linked into the CLI or the tests, which use jansson itself. */
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

static json_t sink = {JSON_NULL, (size_t)-1};

json_t *json_object(void)
{
    return &sink;
}
json_t *json_array(void)
{
    return &sink;
}
json_t *json_string(const char *value)
{
    (void)value;
    return &sink;
}
json_t *json_integer(json_int_t value)
{
    (void)value;
    return &sink;
}
json_t *json_real(double value)
{
    (void)value;
    return &sink;
}
json_t *json_null(void)
{
    return &sink;
}
json_t *json_true(void)
{
    return &sink;
}
json_t *json_false(void)
{
    return &sink;
}
json_t *json_pack(const char *fmt, ...)
{
    (void)fmt;
    return &sink;
}
int json_object_set_new(json_t *object, const char *key, json_t *value)
{
    (void)object, (void)key, (void)value;
    return 0;
}
int json_array_append_new(json_t *array, json_t *value)
{
    (void)array, (void)value;
    return 0;
}
json_t *json_object_get(const json_t *object, const char *key)
{
    (void)object, (void)key;
    return &sink;
}
char *json_dumps(const json_t *json, size_t flags)
{
    (void)json, (void)flags;
    return NULL;
}
void json_delete(json_t *json)
{
    (void)json;
}
/* Readers: the passes' text writer turns a jansson value into JSON text
 * (rewrite/json_writer.c, sg_jw_json). Every value here is the one null,
 * so these are never reached with anything else; they exist for the link. */
size_t json_array_size(const json_t *array)
{
    (void)array;
    return 0;
}
json_t *json_array_get(const json_t *array, size_t index)
{
    (void)array, (void)index;
    return &sink;
}
void *json_object_iter(json_t *object)
{
    (void)object;
    return NULL;
}
void *json_object_iter_next(json_t *object, void *iter)
{
    (void)object, (void)iter;
    return NULL;
}
const char *json_object_iter_key(void *iter)
{
    (void)iter;
    return "";
}
json_t *json_object_iter_value(void *iter)
{
    (void)iter;
    return &sink;
}
const char *json_string_value(const json_t *string)
{
    (void)string;
    return "";
}
json_int_t json_integer_value(const json_t *integer)
{
    (void)integer;
    return 0;
}
double json_real_value(const json_t *real)
{
    (void)real;
    return 0.0;
}
