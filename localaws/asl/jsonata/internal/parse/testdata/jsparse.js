// Reads a JSON array of expressions (file argv[3]) and writes, for each, the processed tree of the npm package
// jsonata (its ast(), the tree its parser leaves) in a canonical form, or the error it throws. argv[2] is the
// repository root, whose node_modules holds the package.
const jsonata = require(require('path').join(process.argv[2], 'node_modules', 'jsonata'));
const exprs = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
const keys = ['type','value','position','steps','stages','predicate','group','focus','index','tuple','ancestor','slot',
  'keepArray','keepSingletonArray','consarray','lhs','rhs','expr','expression','expressions','procedure','arguments',
  'body','thunk','signature','condition','then','else','pattern','update','delete','terms','descending',
  'label','level'];
function canon(n, key) {
  if (Array.isArray(n)) return n.map(x => canon(x));
  if (n === null || typeof n !== 'object') return n;
  if (n instanceof RegExp) return {source: n.source, flags: n.flags.replace('g','')};
  const out = {};
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(n, k) && !(k === 'value' && n.value !== undefined)) continue;
    let v = n[k];
    if (v === undefined || (v === false && k !== 'value')) continue;
    if ((n.type === 'path' || n.type === 'parent') && k === 'position') continue;
    if (k === 'index' && v === '' && n.type !== 'index') continue;
    if (k === 'signature') v = v.definition;
    else if (k === 'arguments' && n.type === 'lambda') v = v.map(a => a.value);
    else v = canon(v, k);
    out[k] = v;
  }
  return out;
}
const res = exprs.map(e => {
  try { return {tree: canon(jsonata(e).ast())}; }
  catch (err) {
    if (!err.code) return {jserror: String(err)};
    return {error: {code: err.code, token: err.token === undefined ? null : String(err.token), position: err.position === undefined ? null : err.position, value: err.value === undefined ? null : err.value}};
  }
});
process.stdout.write(JSON.stringify(res));
